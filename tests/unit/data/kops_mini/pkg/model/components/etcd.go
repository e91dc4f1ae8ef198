package components

// The etcd versions kops supports, as pkg/model/components/etcd.go declares them
// (written for tests/unit/test_data_tables.py): every patch up to each latest.
const (
	LatestEtcd39Version = "3.9.1"
	LatestEtcd310Version = "3.10.0"
)
