package evidence

// SetNoSync turns fsync off (or back on) for s, so that benchmarks can
// build a large log quickly before they measure; production code has no
// way to do this, since a record must be durable when Append returns.
func SetNoSync(s *Store, on bool) { s.db.NoSync = on }
