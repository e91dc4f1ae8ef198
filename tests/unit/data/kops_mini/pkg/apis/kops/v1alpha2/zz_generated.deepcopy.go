package v1alpha2

// Generated code is skipped; this struct must never reach the table.
type Generated struct {
	this is not a field line the parser could read
}
