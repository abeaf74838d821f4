package checkout

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"recon"
)

// Payment codes: how checkout chooses them (docs/api.md, "Payment codes").
//
// An order's code is the prefix of the company's default format (its first
// active one) and Digits random decimal digits: suffix_to capped at 10, and
// at least suffix_from. Codes are unique per company and never reused, also
// after the order is paid, cancelled or voided: a late or repeated transfer
// naming an old code must reach the old order (recorded as a duplicate),
// never pay a new one. A format therefore holds 10^Digits codes in all.
//
// Checkout draws at random; when a drawn code is taken it counts the codes in
// use (logging a warning and setting recon_payment_code_usage_ratio once 80%
// are), and after codeDraws taken draws it looks for a free code itself when
// the format holds at most codeScanMax codes, else gives up. Either way a
// format with no free code is a 409 naming it.

// codeDraws is how many random codes checkout tries before looking further.
const codeDraws = 5

// codeScanMax is the largest format whose free codes checkout looks for one
// by one (listing the codes in use) once random draws fail.
const codeScanMax = 100_000

// codeWarnRatio is the share of a format's codes in use from which checkout
// warns (log and metric).
const codeWarnRatio = 0.8

// codeFormat is the format checkout draws codes from: Prefix and Digits
// random decimal digits.
type codeFormat struct {
	Prefix string
	Digits int
}

// defaultCodeFormat is the company's first active format: its prefix and as
// many digits as fit suffix_from..suffix_to, preferring 10 (few collisions,
// short memos). No active format gives DH and 8 digits (its transfers are
// matched only once a format that covers them is configured).
func defaultCodeFormat(formats []recon.PaymentCodeFormat) codeFormat {
	for _, f := range formats {
		if f.IsActive {
			return codeFormat{f.Prefix, max(f.SuffixFrom, min(f.SuffixTo, 10))}
		}
	}
	return codeFormat{"DH", 8}
}

// capacity is the number of codes the format holds: 10^Digits (MaxInt64
// from 19 digits on, beyond int64: as good as endless).
func (f codeFormat) capacity() int64 {
	if f.Digits >= 19 {
		return math.MaxInt64
	}
	n := int64(1)
	for range f.Digits {
		n *= 10
	}
	return n
}

func (f codeFormat) String() string {
	if f.Digits == 1 {
		return f.Prefix + " followed by 1 digit"
	}
	return fmt.Sprintf("%s followed by %d digits", f.Prefix, f.Digits)
}

// random draws a code from r.
func (f codeFormat) random(r io.Reader) string { return f.Prefix + randomDigits(r, f.Digits) }

// code is the format's n-th code (0-based).
func (f codeFormat) code(n int64) string {
	s := strconv.FormatInt(n, 10)
	return f.Prefix + strings.Repeat("0", f.Digits-len(s)) + s
}

func randomDigits(r io.Reader, n int) string {
	b := make([]byte, n)
	ten := big.NewInt(10)
	for i := range b {
		d, err := rand.Int(r, ten)
		if err != nil {
			panic(err) // crypto/rand does not fail
		}
		b[i] = byte('0' + d.Int64())
	}
	return string(b)
}

// Metrics holds the checkout's metrics.
type Metrics struct {
	codeUsage *prometheus.GaugeVec
}

// NewMetrics registers the checkout's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{codeUsage: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "recon_payment_code_usage_ratio",
		Help: "Share of a company's default payment-code format already used by orders (0..1), as last counted at checkout; " +
			"counted when a drawn code is taken. Warn from 0.8: codes are never reused.",
	}, []string{"company_id", "format"})}
	reg.MustRegister(m.codeUsage)
	return m
}

// observeCodeUsage records how full the format is, warning from codeWarnRatio.
func (s *Service) observeCodeUsage(companyID int64, f codeFormat, used int64) {
	ratio := float64(used) / float64(f.capacity())
	if s.Metrics != nil {
		s.Metrics.codeUsage.WithLabelValues(strconv.FormatInt(companyID, 10), fmt.Sprintf("%s%d", f.Prefix, f.Digits)).Set(ratio)
	}
	if ratio >= codeWarnRatio {
		s.logger().Warn("payment-code format nearly used up: codes are never reused; widen the format (suffix_to) or add one",
			"company_id", companyID, "format", f.String(), "used", used, "capacity", f.capacity(), "ratio", ratio)
	}
}

// freeCode finds a free code of the format after random draws failed, or
// returns ECONFLICT naming the format when none is free (or, in a format
// too large to list, none was found).
func (s *Service) freeCode(ctx context.Context, tenant recon.TenantID, f codeFormat) (string, error) {
	capacity := f.capacity()
	list := 0
	if capacity <= codeScanMax {
		list = int(capacity)
	}
	used, codes, err := s.Store.PaymentCodesInUse(ctx, tenant, f.Prefix, f.Digits, list)
	if err != nil {
		return "", err
	}
	s.observeCodeUsage(tenant.ID(), f, used)
	if used >= capacity {
		return "", recon.Errorf(recon.ECONFLICT, "payment-code format %s: all %d payment codes are used by this merchant's orders (codes are never reused): make suffix_to longer or put a wider format first", f, capacity)
	}
	if codes == nil {
		return "", recon.Errorf(recon.ECONFLICT, "payment-code format %s: %d of %d payment codes are used and %d random draws were all taken: retry, and make suffix_to longer or put a wider format first", f, used, capacity, codeDraws)
	}
	taken := make(map[string]bool, len(codes))
	for _, c := range codes {
		taken[c] = true
	}
	start, err := rand.Int(s.random(), big.NewInt(capacity))
	if err != nil {
		panic(err)
	}
	for k := int64(0); k < capacity; k++ {
		if c := f.code((start.Int64() + k) % capacity); !taken[c] {
			return c, nil
		}
	}
	return "", recon.Errorf(recon.ECONFLICT, "payment-code format %s: all %d payment codes are used by this merchant's orders (codes are never reused): make suffix_to longer or put a wider format first", f, capacity)
}
