package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"

	"recon"
)

// MaxURLLength is the longest target URL accepted, in characters (spec §8;
// docs/api.md, Notifications).
const MaxURLLength = 2000

// The two kinds of URL refusal. CheckURL's errors are *recon.Error with code
// EINVALID whose Err is one of these, so errors.Is tells them apart: "invalid
// URL" and "internal address blocked (request forgery protection)" are the two
// causes spec §7 (docs/hub.md, The webhook API) lists for a 400 of the webhook
// endpoint.
var (
	ErrInvalidURL     = errors.New("invalid URL")
	ErrBlockedAddress = errors.New("internal address blocked")
)

// IsBlocked reports whether err refused a URL because its host is, or
// resolves to, an internal address.
func IsBlocked(err error) bool { return errors.Is(err, ErrBlockedAddress) }

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// guardian decides which addresses are internal, at save time (URLChecker)
// and at connect time (Client): IANA's special-purpose IPv4 ranges (which hold
// loopback, private, link-local, shared, "this network", multicast and
// broadcast) and every IPv6 address outside global unicast 2000::/3 (which
// excludes ::1, ::, fc00::/7, fe80::/10, multicast and the IPv4-mapped
// ::ffff:0:0/96), plus IANA's special ranges within it. Any port is allowed.
var guardian = ssrf.New(ssrf.WithAnyPort())

// internalAddr reports whether a is an address no delivery may go to.
func internalAddr(a netip.Addr) bool { return guardian.SafeAddr(a) != nil }

// blockedSuffixes are name suffixes that only ever name internal hosts.
var blockedSuffixes = []string{".localhost", ".internal", ".local", ".localdomain", ".home.arpa"}

// URLChecker checks a target URL when it is saved (IPN settings, the hub
// webhook): an absolute http(s) URL of at most MaxURLLength characters,
// https unless Sandbox, no user name or password, and, unless AllowPrivate,
// a host that is not an internal address in any spelling:
//
//   - IP literals as browsers and inet_aton read them: decimal
//     (http://2130706433/), octal (0177.0.0.1), hex (0x7f.0.0.1), short
//     forms (127.1), and IPv6 literals including IPv4-mapped ones
//     ([::ffff:7f00:1]), all of which are refused;
//   - names: localhost, single-label names (resolved through search domains
//     to intranet hosts), and names under .localhost, .internal, .local,
//     .localdomain and .home.arpa;
//   - any other name is resolved, and refused when any of its addresses is
//     internal. A name that does not resolve is accepted: the name may not be
//     published yet, and the connect-time check of Client guards the send.
//
// Host names must be ASCII (international names in their xn-- form).
type URLChecker struct {
	Sandbox      bool
	AllowPrivate bool
	// Resolver looks names up (default net.DefaultResolver).
	Resolver Resolver
	// Field names the URL in the errors' field problems (default "url").
	Field string
}

// CheckURL checks a target URL with the system resolver (see URLChecker).
// An error is a *recon.Error with code EINVALID; IsBlocked tells "internal
// address blocked" from "invalid URL".
func CheckURL(raw string, sandbox, allowPrivate bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return URLChecker{Sandbox: sandbox, AllowPrivate: allowPrivate}.Check(ctx, raw)
}

// Check checks raw (see URLChecker).
func (c URLChecker) Check(ctx context.Context, raw string) error {
	field := c.Field
	if field == "" {
		field = "url"
	}
	fail := func(kind error, format string, args ...any) error {
		msg := field + " " + fmt.Sprintf(format, args...)
		return &recon.Error{Code: recon.EINVALID, Message: msg, Fields: map[string][]string{field: {msg}}, Err: kind}
	}
	invalid := func(format string, args ...any) error { return fail(ErrInvalidURL, format, args...) }
	blocked := func(host string) error {
		return fail(ErrBlockedAddress, "must not point to an internal address (%s)", host)
	}

	switch {
	case raw == "":
		return invalid("is required")
	case utf8.RuneCountInString(raw) > MaxURLLength:
		return invalid("must be at most %d characters", MaxURLLength)
	case strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return invalid("must not contain spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return invalid("is not a valid URL")
	}
	scheme := "https"
	if c.Sandbox {
		scheme = "http or https"
	}
	switch {
	case !u.IsAbs() || u.Opaque != "":
		return invalid("must be an absolute URL (https://host/path)")
	case u.Scheme != "https" && (u.Scheme != "http" || !c.Sandbox):
		return invalid("must use %s", scheme)
	case u.User != nil:
		return invalid("must not contain a user name or password")
	case u.Hostname() == "":
		return invalid("must name a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return invalid("has an invalid port")
		}
	}

	host := u.Hostname()
	addr, isIP, err := parseHostIP(host)
	if err != nil {
		return invalid("has an invalid IP address as its host")
	}
	if isIP {
		if !c.AllowPrivate && internalAddr(addr) {
			return blocked(host)
		}
		return nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if !validHostName(name) {
		return invalid("must have a DNS name or an IP address as its host (international names in their xn-- form)")
	}
	if c.AllowPrivate {
		return nil
	}
	if internalName(name) {
		return blocked(host)
	}
	resolver := c.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupIPAddr(ctx, name)
	if err != nil {
		return nil // not resolvable now: Client checks the address it connects to
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || internalAddr(ip.Unmap()) {
			return blocked(host)
		}
	}
	return nil
}

// internalName reports whether a (lower-case, valid) host name names an
// internal host whatever it resolves to.
func internalName(name string) bool {
	if name == "localhost" || !strings.Contains(name, ".") {
		return true
	}
	for _, s := range blockedSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// validHostName reports whether name is an ASCII DNS name: dot-separated
// labels of 1 to 63 letters, digits, hyphens and underscores, 253 in all.
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// parseHostIP reads the host of a URL as an IP address the way browsers (the
// WHATWG URL standard) and inet_aton do, so that no spelling of an internal
// address slips through as a "name": IPv6 literals (the brackets already
// removed), and IPv4 in one to four parts, each decimal, octal (leading 0) or
// hex (0x), the last part filling the remaining bytes (127.1 is 127.0.0.1,
// 2130706433 is 127.0.0.1). A host whose last label is a number is an IPv4
// address or invalid (err); any other host is a name (isIP false).
func parseHostIP(host string) (addr netip.Addr, isIP bool, err error) {
	if strings.Contains(host, ":") {
		addr, err = netip.ParseAddr(host)
		return addr, true, err
	}
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // one trailing dot
	}
	if !numericLabel(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("more than 4 parts")
	}
	var v uint64
	for i, p := range parts {
		n, err := parseIPv4Part(p)
		if err != nil {
			return netip.Addr{}, true, err
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, true, errors.New("part out of range")
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, true, errors.New("last part out of range")
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// numericLabel reports whether a label is a number as the WHATWG "ends in a
// number" check sees it: decimal digits, or 0x followed by hex digits.
func numericLabel(s string) bool {
	if s == "" {
		return false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

// parseIPv4Part reads one part of an IPv4 address: 0x hex, 0 octal, or decimal.
func parseIPv4Part(s string) (uint64, error) {
	base := 10
	switch lower := strings.ToLower(s); {
	case strings.HasPrefix(lower, "0x"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, errors.New("empty part")
	}
	return strconv.ParseUint(s, base, 32)
}
