"""Test helper: records every botocore API call of this process (one line per call) to $KOPS_TEST_CALL_LOG."""
import os

if os.environ.get("KOPS_TEST_CALL_LOG"):
    import botocore.client

    _make_api_call = botocore.client.BaseClient._make_api_call

    def _recording(self, operation_name, api_params):
        with open(os.environ["KOPS_TEST_CALL_LOG"], "a") as log:
            log.write("%s %s\n" % (self.meta.service_model.service_name, operation_name))
        return _make_api_call(self, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = _recording
