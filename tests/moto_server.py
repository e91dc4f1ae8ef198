"""moto's server, made to keep the subnet attributes it drops and to list EventBridge rules in the tagging
API (run by tests/servers.MotoServer, and by tests/faults.py).

moto 5 ignores ModifySubnetAttribute PrivateDnsHostnameTypeOnLaunch (the subnet keeps "ip-name"),
EnableResourceNameDnsAAAARecordOnLaunch and EnableDns64, so a model that compares them, as it must
on AWS, would never converge on moto.  Here they are stored as AWS stores them.  moto 5.2's Resource
Groups Tagging API GetResources lists event buses but not rules (AWS lists rules as events:rule), so
the cluster's rules would always be asked with ListTagsForResource; here they are listed, with the
tags ListTagsForResource answers.  Nothing else differs from `python -m moto.server`.
"""

from __future__ import annotations

from moto.core.resource_tagging import TaggedResource
from moto.ec2.responses import subnets
from moto.events import models as events_models
from moto.server import main


def _keep_dropped_attributes(modify):
    def modify_subnet_attribute(self):
        subnet = self.ec2_backend.get_subnet(self._get_param("SubnetId"))
        hostname_type = self._get_param("PrivateDnsHostnameTypeOnLaunch")
        if hostname_type:
            subnet.private_dns_name_options_on_launch["HostnameType"] = hostname_type
        aaaa = self._get_param("EnableResourceNameDnsAAAARecordOnLaunch.Value")
        if aaaa is not None:
            subnet.private_dns_name_options_on_launch["EnableResourceNameDnsAAAARecord"] = str(aaaa).lower() == "true"
        dns64 = self._get_param("EnableDns64.Value")
        if dns64 is not None:
            subnet.enable_dns64 = str(dns64).lower() == "true"
        return modify(self)
    return modify_subnet_attribute


subnets.Subnets.modify_subnet_attribute = _keep_dropped_attributes(subnets.Subnets.modify_subnet_attribute)


def _with_rules(iter_tagged_resources):
    def with_rules(self):
        yield from iter_tagged_resources(self)
        for bus in self.event_buses.values():
            for rule in bus.rules.values():
                tags = self.tagger.get_tag_dict_for_resource(rule.arn)
                if tags:
                    yield TaggedResource(arn=rule.arn, tags=tags, resource_type="events:rule")
    return with_rules


events_models.EventsBackend.iter_tagged_resources = _with_rules(events_models.EventsBackend.iter_tagged_resources)

if __name__ == "__main__":
    main()
