package sqlstore

import (
	"syscall"
	"time"
)

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option (linux/tcp.h).
const tcpUserTimeout = 0x12

// setUserTimeout sets TCP_USER_TIMEOUT on the socket fd; a failure leaves
// the kernel's default (the keepalives still apply).
func setUserTimeout(fd uintptr, d time.Duration) {
	_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d/time.Millisecond))
}
