package kops

var Version = KOPS_RELEASE_VERSION

const (
	KOPS_RELEASE_VERSION = "1.99.0-mini.1"
	KOPS_CI_VERSION      = "1.99.0-mini.2"
)
