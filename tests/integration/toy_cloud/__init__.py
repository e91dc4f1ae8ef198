"""toy: a third cloud (provider.py), see provider.py."""
