package gateway

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"recon"
)

func TestParseForm(t *testing.T) {
	for _, tt := range []struct {
		body string
		want []field
		err  string
	}{
		{"", nil, ""},
		{"b=2&a=1", []field{{"b", "2"}, {"a", "1"}}, ""},
		{"a=x+y%20z&&c=&d", []field{{"a", "x y z"}, {"c", ""}, {"d", ""}}, ""},
		{"order_description=%C4%90%C6%A1n+h%C3%A0ng+%231&sort%5Bx%5D=1", []field{{"order_description", "Đơn hàng #1"}, {"sort[x]", "1"}}, ""},
		{"u=https%3A%2F%2Fa.vn%2Fok%3Fx%3D1%26y%3D2", []field{{"u", "https://a.vn/ok?x=1&y=2"}}, ""},
		{"a=1=2", []field{{"a", "1=2"}}, ""},
		{"a=%zz", nil, "the form field a is not properly URL-encoded"},
		{"%zz=1", nil, "the form is not properly URL-encoded: bad escape in a field name"},
		{"=1", nil, "the form has a field without a name"},
		{"a=%FF", nil, "the form is not valid UTF-8"},
		{"a=1&a=2", nil, "the form field a is given more than once"},
		{manyFields(101), nil, "the form has more than 100 fields"},
	} {
		got, err := parseForm(tt.body)
		if tt.err != "" {
			if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tt.err {
				t.Errorf("%q: error %v, want %q", tt.body, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %v %v, want %v", tt.body, got, err, tt.want)
		}
	}
}

func manyFields(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, "f"+strings.Repeat("x", i)+"=1")
	}
	return strings.Join(parts, "&")
}

func TestSigningString(t *testing.T) {
	fields := []field{{"merchant", "M1"}, {"currency", "VND"}, {"order_amount", "100000"}, {"operation", "PURCHASE"},
		{"order_description", "Áo, quần=2"}, {"custom_data", "[1]"}, {"branch_code", "X"}, {"order_invoice_number", "INV_1"},
		{"success_url", "https://a.vn/?a=1&b=2"}, {"signature", "zzz"}}
	want := "merchant=M1,currency=VND,order_amount=100000,operation=PURCHASE,order_description=Áo, quần=2," +
		"custom_data=[1],order_invoice_number=INV_1,success_url=https://a.vn/?a=1&b=2"
	if got := signingString(fields); got != want {
		t.Fatalf("signing string\n got %s\nwant %s", got, want)
	}
	// The SDK's README example: base64 of HMAC-SHA256, 44 characters.
	sig := sign("spsk_live_xxxxxxxxxxxo99PoE7RsBpss3EFH5nV", fields)
	if len(sig) != 44 || !validSignature("spsk_live_xxxxxxxxxxxo99PoE7RsBpss3EFH5nV", fields, sig) || validSignature("other", fields, sig) {
		t.Fatalf("signature %q", sig)
	}
}

func TestCustomData(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "[]",
		"  ":                   "[]",
		`[1, "a", {"b": [2]}]`: `[1,"a",{"b":[2]}]`,
		`[]`:                   `[]`,
		`{"a":1}`:              `["{\"a\":1}"]`,
		`null`:                 `["null"]`,
		"ghi chú <b>":          `["ghi chú <b>"]`,
		`[1,`:                  `["[1,"]`,
	} {
		got, err := customData(in)
		if err != nil || got != want {
			t.Errorf("customData(%q) = %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := customData(strings.Repeat("x", maxCustomDataLen+1)); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("oversized custom_data: %v", err)
	}
}

// FuzzParseForm checks the form parser against url.ParseQuery: whatever it
// accepts decodes to the same pairs, in the order they appear in the body.
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a=x+y%20z&&c=&d", "a=%zz", "a=1&a=2", "=", "%C4%90=%C6%A1", "a=%FF", "&&&", "a==", "x%3Dy=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fields, err := parseForm(body)
		if err != nil {
			if recon.ErrorCode(err) != recon.EINVALID {
				t.Fatalf("%q: error of code %q: %v", body, recon.ErrorCode(err), err)
			}
			return
		}
		if len(fields) > maxFormFields {
			t.Fatalf("%q: %d fields", body, len(fields))
		}
		// url.ParseQuery also rejects ';' and sorts nothing: compare where it accepts.
		vals, qerr := url.ParseQuery(body)
		seen := map[string]bool{}
		for _, fl := range fields {
			if fl.name == "" || seen[fl.name] || !utf8.ValidString(fl.name) || !utf8.ValidString(fl.value) {
				t.Fatalf("%q: bad field %q", body, fl)
			}
			seen[fl.name] = true
			if qerr == nil && (len(vals[fl.name]) != 1 || vals[fl.name][0] != fl.value) {
				t.Fatalf("%q: field %q=%q, url.ParseQuery has %q", body, fl.name, fl.value, vals[fl.name])
			}
		}
		if qerr == nil && len(vals) != len(fields) {
			t.Fatalf("%q: %d fields, url.ParseQuery has %d", body, len(fields), len(vals))
		}
		// Re-encoding in order and parsing again gives the same pairs.
		var parts []string
		for _, fl := range fields {
			parts = append(parts, url.QueryEscape(fl.name)+"="+url.QueryEscape(fl.value))
		}
		again, err := parseForm(strings.Join(parts, "&"))
		if err != nil || !reflect.DeepEqual(again, fields) {
			t.Fatalf("%q: round trip %v %v, want %v", body, again, err, fields)
		}
	})
}
