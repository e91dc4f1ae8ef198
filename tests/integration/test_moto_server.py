"""tests/moto_server.py behaves as AWS where moto 5.2 does not (issue 22 item 8): a launch template version made by
CreateLaunchTemplateVersion launches, an autoscaling group's instances are tagged and reported with the version they
were launched from, a deleted subnet's route table association is dropped, templates asked for by id are all
answered and a target group name may hold "--".  Plain boto3 on the tests' moto
server."""

from __future__ import annotations

import base64

import boto3
import pytest

MOTO_AMI = "ami-1e749f67"


def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


@pytest.fixture
def template(aws):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    made = ec2.create_launch_template(LaunchTemplateName="moto-lt", LaunchTemplateData={
        "ImageId": MOTO_AMI, "InstanceType": "t3.medium", "UserData": _b64("#!/bin/bash\necho one\n")})
    version = ec2.create_launch_template_version(LaunchTemplateId=made["LaunchTemplate"]["LaunchTemplateId"],
                                                 LaunchTemplateData={"ImageId": MOTO_AMI, "InstanceType": "t3.large",
                                                                     "UserData": _b64("#!/bin/bash\necho two\n")})
    assert version["LaunchTemplateVersion"]["VersionNumber"] == 2
    return made["LaunchTemplate"]["LaunchTemplateId"]


def _launch(template_id, version):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    subnet = ec2.describe_subnets()["Subnets"][0]
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    autoscaling.create_auto_scaling_group(AutoScalingGroupName="moto-asg", MinSize=1, MaxSize=1,
                                          LaunchTemplate={"LaunchTemplateId": template_id, "Version": version},
                                          VPCZoneIdentifier=subnet["SubnetId"])
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["moto-asg"])["AutoScalingGroups"][0]
    assert len(group["Instances"]) == 1
    member = group["Instances"][0]
    instance = ec2.describe_instances(InstanceIds=[member["InstanceId"]])["Reservations"][0]["Instances"][0]
    user_data = ec2.describe_instance_attribute(InstanceId=member["InstanceId"], Attribute="userData")["UserData"]
    return member, instance, base64.b64decode(user_data["Value"]).decode("utf-8")


@pytest.mark.parametrize("version", ["$Latest", "2"])
def test_a_group_launches_from_a_version_made_by_create_launch_template_version(template, version):
    member, instance, user_data = _launch(template, version)
    assert user_data == "#!/bin/bash\necho two\n"
    assert instance["InstanceType"] == "t3.large"
    tags = {t["Key"]: t["Value"] for t in instance.get("Tags") or []}
    assert tags["aws:ec2launchtemplate:version"] == "2"
    assert member["LaunchTemplate"]["Version"] == "2"
    reported = boto3.client("autoscaling", region_name="us-east-1").describe_auto_scaling_instances(
        InstanceIds=[member["InstanceId"]])["AutoScalingInstances"][0]
    assert reported["LaunchTemplate"]["Version"] == "2"


def test_a_group_on_the_default_version_still_reports_it(template):
    member, instance, user_data = _launch(template, "$Default")
    assert user_data == "#!/bin/bash\necho one\n"
    assert {t["Key"]: t["Value"] for t in instance["Tags"]}["aws:ec2launchtemplate:version"] == "1"
    assert member["LaunchTemplate"]["Version"] == "1"


def test_malformed_user_data_of_a_new_version_is_refused_as_on_aws(template):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    with pytest.raises(ec2.exceptions.ClientError) as refused:
        ec2.create_launch_template_version(LaunchTemplateId=template, LaunchTemplateData={"UserData": "not base64!"})
    assert "InvalidUserData" in refused.value.response["Error"]["Code"]


def test_deleting_a_subnet_drops_its_route_table_association_as_on_aws(aws):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    kept = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.2.0/24")["Subnet"]["SubnetId"]
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=table, SubnetId=subnet)
    ec2.associate_route_table(RouteTableId=table, SubnetId=kept)
    ec2.delete_subnet(SubnetId=subnet)
    associations = ec2.describe_route_tables(RouteTableIds=[table])["RouteTables"][0]["Associations"]
    assert [a["SubnetId"] for a in associations] == [kept]


def test_describing_templates_by_id_answers_every_one_as_on_aws(aws):
    """A roll asks for its groups' templates by id; AWS answers them all, moto 5.2 only the first 15."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    ids = [ec2.create_launch_template(LaunchTemplateName="t%02d" % i, LaunchTemplateData={"ImageId": "ami-1e749f67"})[
        "LaunchTemplate"]["LaunchTemplateId"] for i in range(20)]
    found = ec2.describe_launch_templates(LaunchTemplateIds=ids)["LaunchTemplates"]
    assert sorted(t["LaunchTemplateId"] for t in found) == sorted(ids)
    assert len(ec2.describe_launch_templates(MaxResults=5)["LaunchTemplates"]) == 5  # without ids: paged as before


def test_a_target_group_name_with_consecutive_hyphens_is_made_as_on_aws(aws):
    """kops' GetResourceName32 names the API's target group tcp-walk-cluster-example--kt06jc for walk-cluster.example.com
    (the truncated name ends in a hyphen); AWS makes it, moto 5.2 refused it. Its documented rules still hold."""
    from botocore.exceptions import ClientError
    ec2 = boto3.client("ec2", region_name="us-east-1")
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    vpc = ec2.describe_vpcs()["Vpcs"][0]["VpcId"]
    made = elbv2.create_target_group(Name="tcp-walk-cluster-example--kt06jc", Protocol="TCP", Port=443, VpcId=vpc)
    assert made["TargetGroups"][0]["TargetGroupName"] == "tcp-walk-cluster-example--kt06jc"
    for refused in ("-tcp-leading", "tcp-trailing-", "tcp_underscore", "t" * 33):
        with pytest.raises(ClientError):
            elbv2.create_target_group(Name=refused, Protocol="TCP", Port=443, VpcId=vpc)
