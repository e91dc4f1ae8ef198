"""moto's server, made to keep the subnet attributes it drops and to list EventBridge rules in the tagging
API (run by tests/servers.MotoServer, and by tests/faults.py).

moto 5 ignores ModifySubnetAttribute PrivateDnsHostnameTypeOnLaunch (the subnet keeps "ip-name"),
EnableResourceNameDnsAAAARecordOnLaunch and EnableDns64, so a model that compares them, as it must
on AWS, would never converge on moto.  Here they are stored as AWS stores them.  moto 5.2's Resource
Groups Tagging API GetResources lists event buses but not rules (AWS lists rules as events:rule), so
the cluster's rules would always be asked with ListTagsForResource; here they are listed, with the
tags ListTagsForResource answers.

Launch template versions: AWS launches from any version of a template, whichever call made it; moto 5.2 keeps
the UserData of a version made by CreateLaunchTemplateVersion as the request's text instead of its base64 type,
so every later launch from that version fails inside moto (an HTML 500 from the assertion in
moto/ec2/models/launch_templates.py's user_data).  Here it is kept as CreateLaunchTemplate keeps it.  And an
AWS autoscaling group's instance is launched from, tagged with (aws:ec2launchtemplate:version) and reported
(DescribeAutoScalingGroups/Instances' LaunchTemplate.Version) as the version the group names; moto 5.2 takes
its user data, image and type from that version but tags and reports the template's default version.  Here
the version the instance was launched from is tagged and reported.  AWS drops a deleted subnet's route table
association; moto 5.2 keeps it: here it is dropped.  DescribeLaunchTemplates by ids or names answers every template
named on AWS; moto 5.2 answers 15 at most: here every one.
An instance's instance-profile credentials: on EC2 the instance metadata service hands an instance its profile
role's session (AssumeRole by ec2.amazonaws.com, which kops' roles trust, and no one else); moto has no such
service, and an AssumeRole by any other principal is refused by the role's trust policy, as on AWS.  Here
`GET /moto-api/kubeops/instance-credentials?instance_id=i-...` answers what the metadata service's
iam/security-credentials/<role> answers (AccessKeyId, SecretAccessKey, Token): a session of the instance's
profile role named after the instance, as EC2 names it.  Test hosts that play an instance hold these.
Nothing else differs from `python -m moto.server`.
"""

from __future__ import annotations

import re
import threading

from moto.autoscaling import models as autoscaling_models
from moto.core.resource_tagging import TaggedResource
from moto.core.types import Base64EncodedString
from moto.ec2.models import instances as ec2_instances
from moto.ec2.models import launch_templates
from moto.ec2.models import subnets as subnet_models
from moto.ec2.responses import launch_templates as template_responses
from moto.ec2.responses import subnets
from moto.ec2.utils import parse_user_data
from moto.elbv2 import models as elbv2_models
from moto.events import models as events_models
from moto.moto_api._internal import urls as moto_api_urls
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


# AWS: a version made by CreateLaunchTemplateVersion launches like one made by CreateLaunchTemplate.
def _user_data_as_created(create_version):
    def create_version_keeping_user_data(self, data, description):
        user_data = data.get("UserData")
        if user_data is not None and not isinstance(user_data, Base64EncodedString):
            # AWS: UserData must be base64 here as on CreateLaunchTemplate (InvalidUserData.Malformed otherwise).
            data = dict(data, UserData=parse_user_data(user_data))
        return create_version(self, data, description)
    return create_version_keeping_user_data


launch_templates.LaunchTemplate.create_version = _user_data_as_created(launch_templates.LaunchTemplate.create_version)

# AWS: an autoscaling group's instance is tagged and reported with the version it was launched from (the group's).
# The version number an autoscaling group is launching from, per server thread, between the group's launch and the
# EC2 backend's run_instances it calls (which is not told the version).
_LAUNCHING = threading.local()


def _launch_the_groups_version(replace_instances):
    def replace_autoscaling_group_instances(self, count_needed, propagated_tags):
        template = self.ec2_launch_template
        _LAUNCHING.version = template.get_version(self.launch_template_version).number if template else None
        try:
            return replace_instances(self, count_needed, propagated_tags)
        finally:
            _LAUNCHING.version = None
    return replace_autoscaling_group_instances


def _run_the_launching_version(run_instances):
    def run_instances_of_version(self, image_id, count, user_data, security_group_names, **kwargs):
        version = getattr(_LAUNCHING, "version", None)
        if version is not None and kwargs.get("launch_template") and "Version" not in kwargs["launch_template"]:
            kwargs["launch_template"] = dict(kwargs["launch_template"], Version=str(version))
        reservation = run_instances(self, image_id, count, user_data, security_group_names, **kwargs)
        if version is not None:
            for instance in reservation.instances:
                instance.launched_template_version = str(version)
        return reservation
    return run_instances_of_version


def _launched_version(self):
    """An instance's LaunchTemplate as AWS reports it: the version it was launched from."""
    template = self.auto_scaling_group.ec2_launch_template if self.auto_scaling_group is not None else None
    if template is None:
        return None
    return {"LaunchTemplateId": template.id, "LaunchTemplateName": template.name,
            "Version": getattr(self.instance, "launched_template_version", None) or template.default_version_number}


autoscaling_models.FakeAutoScalingGroup.replace_autoscaling_group_instances = _launch_the_groups_version(
    autoscaling_models.FakeAutoScalingGroup.replace_autoscaling_group_instances)
ec2_instances.InstanceBackend.run_instances = _run_the_launching_version(ec2_instances.InstanceBackend.run_instances)
autoscaling_models.InstanceState.launch_template = property(_launched_version)


# AWS: deleting a subnet removes its route table association (moto 5.2 keeps it, and the table can then never be
# deleted without a DisassociateRouteTable AWS would answer InvalidAssociationID.NotFound).
def _drop_associations(delete_subnet):
    def delete_subnet_and_its_associations(self, subnet_id):
        subnet = delete_subnet(self, subnet_id)
        for table in self.route_tables.values():
            for association_id in [a for a, target in table._associations.items() if target == subnet_id]:
                del table._associations[association_id]
        return subnet
    return delete_subnet_and_its_associations


subnet_models.SubnetBackend.delete_subnet = _drop_associations(subnet_models.SubnetBackend.delete_subnet)


# AWS: DescribeLaunchTemplates by LaunchTemplateIds or LaunchTemplateNames answers every template named (MaxResults
# cannot be given with them); moto 5.2 cuts the answer at MaxResults' default of 15, with no NextToken, so a roll of
# more than 15 groups never found its templates.
def _every_named_template(describe):
    def describe_launch_templates(self):
        named = self._get_param("LaunchTemplateIds", []) or self._get_param("LaunchTemplateNames", [])
        if named and self._get_param("MaxResults") is None:
            get_int = self._get_int_param
            self._get_int_param = lambda name, if_none=None: (  # this request's answer only
                len(named) if name == "MaxResults" else get_int(name, if_none))
        return describe(self)
    return describe_launch_templates


template_responses.LaunchTemplates.describe_launch_templates = _every_named_template(
    template_responses.LaunchTemplates.describe_launch_templates)


# AWS: CreateTargetGroup takes consecutive hyphens in a name (its constraint: at most 32 alphanumerics or hyphens,
# not beginning or ending with one; the API made "new--targetgroup", aws-sdk-js issue 3300). moto 5.2 adds an
# "undocumented validation" refusing "--", which kops' GetResourceName32 makes whenever the truncated cluster name
# ends in a hyphen (walk-cluster.example.com: tcp-walk-cluster-example--kt06jc). Only that one pattern is relaxed.
class _TargetGroupNameRules(object):
    NO_DOUBLE_HYPHEN = r"(?!.*--)(?!^-)(?!.*-$)^[A-Za-z0-9-]+$"
    AWS = r"(?!^-)(?!.*-$)^[A-Za-z0-9-]+$"

    def __getattr__(self, name):
        return getattr(re, name)

    def match(self, pattern, string, flags=0):
        return re.match(self.AWS if pattern == self.NO_DOUBLE_HYPHEN else pattern, string, flags)


elbv2_models.re = _TargetGroupNameRules()


def _instance_credentials(request, full_url, headers):
    """The instance metadata service's role credentials of an instance (module docstring)."""
    import json
    import urllib.parse

    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.iam.models import iam_backends
    from moto.sts.models import sts_backends

    query = urllib.parse.parse_qs(urllib.parse.urlsplit(full_url).query)
    instance_id = (query.get("instance_id") or [""])[0]
    region = (query.get("region") or ["us-east-1"])[0]
    ec2 = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    try:
        instance = ec2.get_instance(instance_id)
    except Exception:  # moto's InvalidInstanceID: answered as the metadata service of no such instance would
        return 404, {}, json.dumps({"Code": "NotFound", "Message": "no instance %s" % instance_id})
    profile = (instance.iam_instance_profile or {}) if isinstance(instance.iam_instance_profile, dict) else {}
    tags = {tag["key"]: tag["value"] for tag in ec2.describe_tags(filters={"resource-id": [instance_id]})}
    if not profile and tags.get("aws:ec2launchtemplate:id"):
        # moto 5.2 launches an autoscaling group's instance without its template's IamInstanceProfile; on AWS the
        # instance has it: read from the version the instance was launched from (tagged, see above).
        template = ec2.get_launch_template(tags["aws:ec2launchtemplate:id"])
        version = template.get_version(tags.get("aws:ec2launchtemplate:version") or "$Default")
        profile = version.data.get("IamInstanceProfile") or {}
    association = ec2.iam_instance_profile_associations.get(instance_id)
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["global"]
    if association is not None:
        found = association.iam_instance_profile
    elif profile.get("Arn"):
        found = iam.get_instance_profile_by_arn(profile["Arn"])
    elif profile.get("Name"):
        found = iam.get_instance_profile(profile["Name"])
    else:
        return 404, {}, json.dumps({"Code": "NotFound", "Message": "instance %s has no instance profile" % instance_id})
    role = found.roles[0]
    session = sts_backends[DEFAULT_ACCOUNT_ID]["aws"].assume_role(
        region_name=region, role_session_name=instance_id, role_arn=role.arn, policy=None, duration=3600,
        external_id=None)
    return 200, {"Content-Type": "application/json"}, json.dumps({
        "Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": session.access_key_id,
        "SecretAccessKey": session.secret_access_key, "Token": session.session_token, "RoleArn": role.arn})


moto_api_urls.url_paths["{0}/moto-api/kubeops/instance-credentials"] = _instance_credentials

if __name__ == "__main__":
    main()
