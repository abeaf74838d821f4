package main

import (
	"strings"
	"testing"

	"recon"
)

// TestResolveInputFlags: exactly one of the actions of `recon exceptions
// resolve`, --write-off and --ask-remainder among them, checked before the
// database is opened.
func TestResolveInputFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                                    string
		match, refund, ignore, writeOff, askFor bool
		dup, distinct                           bool
		note, action, err                       string
	}{
		{name: "write-off", writeOff: true, note: "phí ngân hàng", action: recon.ResolveWriteOff},
		{name: "ask", askFor: true, note: "nhắc khách", action: recon.ResolveAskRemainder},
		{name: "ignore", ignore: true, note: "x", action: recon.ResolveIgnore},
		{name: "duplicate", dup: true, note: "bản sao của sao kê", action: recon.ResolveDuplicate},
		{name: "distinct", distinct: true, note: "hai lần chuyển", action: recon.ResolveDistinct},
		{name: "duplicate and distinct", dup: true, distinct: true, note: "x", err: "give exactly one of"},
		{name: "two", writeOff: true, ignore: true, note: "x", err: "give exactly one of"},
		{name: "none", note: "x", err: "give exactly one of"},
		{name: "write-off without a note", writeOff: true, err: "note is required"},
	} {
		in, err := resolveInput(c.match, 0, c.refund, c.ignore, c.writeOff, c.askFor, c.note, 0, recon.RefundReceiver{}, c.dup, c.distinct)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		case c.err == "" && (err != nil || in.Action != c.action || in.VA != nil):
			t.Errorf("%s: %+v %v", c.name, in, err)
		}
	}
}
