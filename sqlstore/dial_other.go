//go:build !linux

package sqlstore

import "time"

// setUserTimeout does nothing where TCP_USER_TIMEOUT is not available: the
// keepalives bound the wait on an idle connection only.
func setUserTimeout(uintptr, time.Duration) {}
