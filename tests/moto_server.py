"""moto's server, made to keep one subnet attribute it drops (run by tests/servers.MotoServer).

moto 5 ignores ModifySubnetAttribute PrivateDnsHostnameTypeOnLaunch (the subnet keeps "ip-name"),
so a model that compares it, as it must on AWS, would never converge on moto.  Here the
attribute is stored as AWS stores it; nothing else differs from `python -m moto.server`.
"""

from __future__ import annotations

from moto.ec2.responses import subnets
from moto.server import main


def _keep_hostname_type(modify):
    def modify_subnet_attribute(self):
        hostname_type = self._get_param("PrivateDnsHostnameTypeOnLaunch")
        if hostname_type:
            subnet = self.ec2_backend.get_subnet(self._get_param("SubnetId"))
            subnet.private_dns_name_options_on_launch["HostnameType"] = hostname_type
        return modify(self)
    return modify_subnet_attribute


subnets.Subnets.modify_subnet_attribute = _keep_hostname_type(subnets.Subnets.modify_subnet_attribute)

if __name__ == "__main__":
    main()
