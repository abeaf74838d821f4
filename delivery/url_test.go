package delivery_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"recon"
	"recon/delivery"
)

// fakeResolver answers from a table; other names do not resolve.
type fakeResolver map[string][]string

func (r fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

var resolver = fakeResolver{
	"shop.example.com": {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"rebind.example":   {"93.184.216.34", "10.0.0.5"},
	"mapped.example":   {"::ffff:127.0.0.1"},
	"meta.example":     {"169.254.169.254"},
	"v6only.example":   {"::1"},
}

// Outcomes of a URL check.
const (
	accepted = "accepted"
	invalid  = "invalid"
	blocked  = "blocked"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	long := "https://shop.example.com/" + strings.Repeat("a", delivery.MaxURLLength-len("https://shop.example.com/"))
	type check struct {
		url                   string
		sandbox, allowPrivate bool
		want                  string
	}
	var cases []check
	add := func(want string, urls ...string) {
		for _, u := range urls {
			cases = append(cases, check{url: u, want: want})
		}
	}
	add(accepted,
		"https://shop.example.com/ipn",
		"https://shop.example.com:8443/ipn?order=1#x",
		"HTTPS://SHOP.EXAMPLE.COM/ipn",
		"https://shop.example.com./ipn", // trailing dot
		"https://8.8.8.8/ipn",
		"https://172.32.0.1/", // just outside 172.16.0.0/12
		"https://[2606:4700:4700::1111]/ipn",
		"https://not-published-yet.example/ipn", // does not resolve: the connect-time check guards
		"https://xn--bcher-kva.example/ipn",
		long,
	)
	add(invalid,
		"",
		"/ipn",
		"ipn",
		"shop.example.com/ipn",
		"//shop.example.com/ipn",
		"ftp://shop.example.com/ipn",
		"javascript:alert(1)",
		"https:shop.example.com/ipn",
		"http://shop.example.com/ipn", // http in production
		"https://user:pass@shop.example.com/ipn",
		"https://user@shop.example.com/ipn",
		"https://@shop.example.com/ipn",
		long+"a",
		"https:///ipn",
		"https://:443/ipn",
		"https://shop.example.com:0/",
		"https://shop.example.com:65536/",
		"https://shop.example.com:https/",
		"https://shop example.com/",
		" https://shop.example.com/",
		"https://shop.example.com/\n",
		"https://bücher.example/ipn",
		"https://-shop.example.com/",
		"https://shop_.example..com/",
		"https://[::1/",
		"https://[::g]/",
		"https://256.1.1.1/",
		"https://1.2.3.4.5/",
		"https://1.256.1/",
		"https://0x100000000/",
		"https://4294967296/",
		"https://08.0.0.1/", // 8 is not an octal digit
		"https://example.123/",
		"https://%31%32%37.0.0.1/",   // percent-encoded ASCII in a host: url.Parse refuses it
		"https://%E2%93%9Bocalhost/", // percent-encoded non-ASCII: not an ASCII name
	)
	add(blocked,
		"https://127.0.0.1/ipn",
		"https://127.0.0.1:8443/ipn",
		"https://127.0.0.1./ipn",
		"https://127.255.255.254/",
		"https://2130706433/",   // decimal
		"https://017700000001/", // octal
		"https://0177.0.0.1/",   // octal first part
		"https://0177.0000.0000.0001/",
		"https://0x7f.0.0.1/", // hex
		"https://0X7F.0x0.0x0.0x1/",
		"https://0x7f000001/",
		"https://0x7f.1/",
		"https://127.1/", // short forms
		"https://127.0.1/",
		"https://0/",
		"https://0.0.0.0/",
		"https://10.0.0.1/",
		"https://167772161/", // 10.0.0.1
		"https://172.16.0.1/",
		"https://172.31.255.255/",
		"https://192.168.1.1/",
		"https://0xc0.0xa8.1.1/", // 192.168.1.1
		"https://169.254.169.254/latest/meta-data/",
		"https://100.64.0.1/",
		"https://224.0.0.1/",
		"https://255.255.255.255/",
		"https://[::1]/",
		"https://[0:0:0:0:0:0:0:1]/",
		"https://[::]/",
		"https://[::ffff:127.0.0.1]/",
		"https://[::ffff:7f00:1]/",
		"https://[::ffff:8.8.8.8]/", // every IPv4-mapped form
		"https://[::127.0.0.1]/",
		"https://[64:ff9b::7f00:1]/", // NAT64 of 127.0.0.1
		"https://[fc00::1]/",
		"https://[fd12:3456:789a::1]/",
		"https://[fe80::1]/",
		"https://[fe80::1%25eth0]/",
		"https://[ff02::1]/",
		"https://localhost/",
		"https://LOCALHOST./",
		"https://localhost:8443/ipn",
		"https://api.localhost/",
		"https://metadata.google.internal/computeMetadata/v1/",
		"https://printer.local/",
		"https://router.home.arpa/",
		"https://intranet/", // single label: resolved through search domains
		"https://rebind.example/",
		"https://mapped.example/",
		"https://meta.example/",
		"https://v6only.example/",
	)
	cases = append(cases,
		check{url: "http://shop.example.com/ipn", sandbox: true, want: accepted},
		check{url: "ftp://shop.example.com/ipn", sandbox: true, want: invalid},
		check{url: "http://127.0.0.1/ipn", sandbox: true, want: blocked},
		check{url: "https://127.0.0.1/ipn", allowPrivate: true, want: accepted},
		check{url: "https://localhost:8443/ipn", allowPrivate: true, want: accepted},
		check{url: "https://rebind.example/", allowPrivate: true, want: accepted},
		check{url: "http://localhost:8080/ipn", sandbox: true, allowPrivate: true, want: accepted},
		check{url: "http://localhost:8080/ipn", allowPrivate: true, want: invalid}, // still https in production
		check{url: "https://user@localhost/", allowPrivate: true, want: invalid},
		check{url: "https://256.0.0.1/", allowPrivate: true, want: invalid},
	)
	for _, tc := range cases {
		c := delivery.URLChecker{Sandbox: tc.sandbox, AllowPrivate: tc.allowPrivate, Resolver: resolver, Field: "webhook_url"}
		err := c.Check(t.Context(), tc.url)
		got := accepted
		if err != nil {
			got = invalid
			if delivery.IsBlocked(err) {
				got = blocked
			}
		}
		name := tc.url
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		if got != tc.want {
			t.Errorf("Check(%q, sandbox %v, allowPrivate %v) = %v (%s), want %s", name, tc.sandbox, tc.allowPrivate, err, got, tc.want)
			continue
		}
		if err == nil {
			continue
		}
		var e *recon.Error
		if !errors.As(err, &e) || e.Code != recon.EINVALID || len(e.Fields["webhook_url"]) != 1 || !strings.HasPrefix(e.Message, "webhook_url ") {
			t.Errorf("Check(%q): error %#v, want an EINVALID *recon.Error naming webhook_url", name, err)
		}
		if errors.Is(err, delivery.ErrInvalidURL) == (got == blocked) {
			t.Errorf("Check(%q): error %v is not exactly one of ErrInvalidURL, ErrBlockedAddress", name, err)
		}
	}
}

func TestCheckURLFunction(t *testing.T) {
	t.Parallel()
	// CheckURL uses the system resolver: literal addresses and names that
	// never reach it.
	for raw, want := range map[string]string{
		"https://127.1/":             blocked,
		"https://localhost/":         blocked,
		"http://203.0.114.1/":        invalid,
		"https://93.184.216.34/ipn":  accepted,
		"https://127.0.0.1:9000/ipn": blocked,
	} {
		err := delivery.CheckURL(raw, false, false)
		got := accepted
		if err != nil {
			got = invalid
			if delivery.IsBlocked(err) {
				got = blocked
			}
		}
		if got != want {
			t.Errorf("CheckURL(%q) = %v (%s), want %s", raw, err, got, want)
		}
	}
	err := delivery.CheckURL("https://[::1]/", false, false)
	var e *recon.Error
	if !errors.As(err, &e) || len(e.Fields["url"]) != 1 {
		t.Fatalf("CheckURL error %#v, want field problems under url", err)
	}
}

// FuzzCheckURL checks that no input panics, and that an accepted URL is an
// https URL whose host is neither an internal address nor a local name, as
// the Go standard library reads it.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://shop.example.com/ipn", "https://0x7f.1/", "https://[::ffff:7f00:1]/",
		"https://2130706433/", "https://localhost./", "http://a/", "https://1.2.3.4/", "https://01.02.03.04/", "https://20000000"} {
		f.Add(s)
	}
	public := fakeResolver{}
	c := delivery.URLChecker{Resolver: resolverFunc(func(host string) []string {
		if a, ok := public[host]; ok {
			return a
		}
		return []string{"93.184.216.34"}
	})}
	f.Fuzz(func(t *testing.T, raw string) {
		if c.Check(context.Background(), raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil {
			t.Fatalf("accepted %q: %v", raw, err)
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if a, err := netip.ParseAddr(host); err == nil && (a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.Is4In6() || a.IsLinkLocalUnicast()) {
			t.Fatalf("accepted %q with an internal address", raw)
		}
		numeric := strings.Trim(host, "0123456789") == "" || strings.HasPrefix(host, "0x") // 2130706433, 0x7f000001
		if host == "localhost" || strings.HasSuffix(host, ".localhost") || !strings.ContainsAny(host, ".:") && !numeric {
			t.Fatalf("accepted %q with a local name", raw)
		}
	})
}

type resolverFunc func(host string) []string

func (r resolverFunc) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return fakeResolver{host: r(host)}.LookupIPAddr(ctx, host)
}
