"""moto's server, made to keep the subnet attributes it drops (run by tests/servers.MotoServer).

moto 5 ignores ModifySubnetAttribute PrivateDnsHostnameTypeOnLaunch (the subnet keeps "ip-name"),
EnableResourceNameDnsAAAARecordOnLaunch and EnableDns64, so a model that compares them, as it must
on AWS, would never converge on moto.  Here they are stored as AWS stores them; nothing else
differs from `python -m moto.server`.
"""

from __future__ import annotations

from moto.ec2.responses import subnets
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

if __name__ == "__main__":
    main()
