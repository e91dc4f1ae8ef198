"""A moto server that checks signatures and IAM policies, and a cluster's node identities in it.

moto checks SigV4 signatures and evaluates IAM policies only once INITIAL_NO_AUTH_ACTION_COUNT
unsigned actions were made: here 3 (the admin user, its policy, its key), so every later call,
including the GetCallerIdentity the bootstrap service forwards, is verified as AWS would.
(moto does not check a signature's age: the service's own window is what refuses an old one.)
Used by tests/unit/nodeup/test_bootstrap_service.py and tests/nodes/test_bootstrap_service.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import boto3
import botocore.credentials

from tests import servers

ACCOUNT = "123456789012"
REGION = "us-east-1"
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
TRUST = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Action": "sts:AssumeRole",
     "Principal": {"Service": "ec2.amazonaws.com", "AWS": "arn:aws:iam::%s:user/admin" % ACCOUNT}}]}


class SigningMoto(object):
    """moto's server with signature and policy checks on, on host (127.0.0.1, or a test bridge)."""

    def __init__(self, host="127.0.0.1"):
        self.port = servers.free_port()
        self.url = "http://%s:%d" % (host, self.port)
        self.host = host
        self.process = None
        self.admin = None

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(servers.__file__), "moto_server.py"),
             "-H", self.host, "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3"))
        servers.wait_for(self.url + "/moto-api/", self.process, timeout=90)  # slow on a loaded machine
        unsigned = boto3.Session(aws_access_key_id="setup", aws_secret_access_key="setup", region_name=REGION)
        iam = unsigned.client("iam", endpoint_url=self.url)
        iam.create_user(UserName="admin")
        iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(ALLOW_ALL))
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        self.admin = boto3.Session(aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"],
                                   region_name=REGION)
        return self

    def client(self, name, session=None):
        return (session or self.admin).client(name, endpoint_url=self.url)

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)


def make_role(moto, name, policy=None):
    iam = moto.client("iam")
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]["Arn"]
    if policy:
        iam.put_role_policy(RoleName=name, PolicyName=name, PolicyDocument=json.dumps(policy))
    return arn


def run_instance(moto, cluster, group, state="running"):
    """An instance tagged as kops tags a group's instances; stopped/terminated when state says so."""
    ec2 = moto.client("ec2")
    tags = [{"Key": "KubernetesCluster", "Value": cluster}, {"Key": "kops.k8s.io/instancegroup", "Value": group},
            {"Key": "kubernetes.io/cluster/%s" % cluster, "Value": "owned"}]
    instance = ec2.run_instances(ImageId="ami-00000001", MinCount=1, MaxCount=1, InstanceType="t3.medium",
                                 TagSpecifications=[{"ResourceType": "instance", "Tags": tags}])["Instances"][0]
    if state == "terminated":
        ec2.terminate_instances(InstanceIds=[instance["InstanceId"]])
    return instance


def instance_credentials(moto, role_arn, instance_id):
    """What an instance profile hands the instance: the role's session named after the instance id."""
    answer = moto.client("sts").assume_role(RoleArn=role_arn, RoleSessionName=instance_id)["Credentials"]
    return botocore.credentials.Credentials(answer["AccessKeyId"], answer["SecretAccessKey"], answer["SessionToken"])


def session_of(credentials):
    return boto3.Session(aws_access_key_id=credentials.access_key, aws_secret_access_key=credentials.secret_key,
                         aws_session_token=credentials.token, region_name=REGION)


SERVICE_NAME = "kops-controller.internal.%s"


def give_worker_identity(moto, cluster, group, host, service_address):
    """A worker test host as an instance of cluster's group: its role session's credentials in
    /root/.aws/credentials (where botocore finds them, as it finds an instance profile's on EC2), and
    the bootstrap service's name resolving to service_address. Returns the instance."""
    iam = moto.client("iam")
    name = "nodes.%s" % cluster
    try:
        arn = iam.get_role(RoleName=name)["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        arn = make_role(moto, name)
    instance = run_instance(moto, cluster, group)
    credentials = instance_credentials(moto, arn, instance["InstanceId"])
    script = ("mkdir -p /root/.aws && printf '[default]\\naws_access_key_id=%s\\naws_secret_access_key=%s\\n"
              "aws_session_token=%s\\n' > /root/.aws/credentials && chmod 600 /root/.aws/credentials && "
              "echo '%s %s' >> /etc/hosts" % (credentials.access_key, credentials.secret_key, credentials.token,
                                              service_address, SERVICE_NAME % cluster))
    done = host.run(script)
    assert done.returncode == 0, done.stderr
    return instance


def serve_bootstrap(moto, cluster, config_base, kubernetes_ca, address, directory, s3=None):
    """The bootstrap service in this process on address:3988 (a test bridge), for tests whose subject is
    elsewhere; (server, log lines). kubernetes_ca: (certificate, key)."""
    import threading

    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service as service
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    ca, ca_key = kubernetes_ca
    cert, key = certs.issue(ca, ca_key, "kops-controller", usages=("server",), dns_names=(SERVICE_NAME % cluster,))
    (directory / "bootstrap-server.crt").write_bytes(certs.certificate_pem(cert))
    (directory / "bootstrap-server.key").write_bytes(certs.key_pem(key))
    verifier = service.AwsVerifier(cluster, ["nodes.%s" % cluster], ACCOUNT, moto.url + "/", moto.client("ec2"))
    lines = []
    server = service.serve(
        service.BootstrapService(verifier, service.Issuer(certs.certificate_pem(ca), certs.key_pem(ca_key)),
                                 service.NodeConfigs(config_base, s3)),
        "%s:%d" % (address, service.PORT), str(directory / "bootstrap-server.crt"),
        str(directory / "bootstrap-server.key"), log=lines.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, lines


class WorkerService(object):
    """For tests whose subject is not the bootstrap service: a worker test host with an identity and a service
    in the test process that answers it. Use as a context manager; .hostvars for the worker's inventory."""

    def __init__(self, pool, host, cluster, group, config_base, kubernetes_ca, directory, s3=None):
        self.args = (pool, host, cluster, group, config_base, kubernetes_ca, directory, s3)
        self.moto = self.server = self.instance = None
        self.lines = []
        self.hostvars = {}

    def __enter__(self):
        pool, host, cluster, group, config_base, kubernetes_ca, directory, s3 = self.args
        bridge = "%s.1" % pool.subnet
        self.moto = SigningMoto().start()
        self.server, self.lines = serve_bootstrap(self.moto, cluster, config_base, kubernetes_ca, bridge, directory,
                                                  s3=s3)
        self.instance = give_worker_identity(self.moto, cluster, group, host, bridge)
        self.hostvars = {"nodeup_bootstrap_sts_endpoint": self.moto.url + "/"}
        return self

    def __exit__(self, *exc):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
        if self.moto:
            self.moto.stop()
        return False
