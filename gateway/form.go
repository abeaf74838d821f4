package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"

	"recon"
)

// field is one name=value pair of a form body, in the order it was posted.
type field struct{ name, value string }

// maxFormFields bounds the pairs of a checkout form.
const maxFormFields = 100

// parseForm decodes an application/x-www-form-urlencoded body into its
// pairs in the order they were posted (url.ParseQuery loses the order, and
// the checkout signature depends on it). Empty pieces ("a=1&&b=2") are
// skipped; a piece without "=" is a name with an empty value. A bad percent
// escape, invalid UTF-8, a repeated name, an empty name or too many pairs is
// EINVALID.
func parseForm(body string) ([]field, error) {
	var out []field
	seen := map[string]bool{}
	for piece := range strings.SplitSeq(body, "&") {
		if piece == "" {
			continue
		}
		if len(out) == maxFormFields {
			return nil, recon.Errorf(recon.EINVALID, "the form has more than %d fields", maxFormFields)
		}
		rawName, rawValue, _ := strings.Cut(piece, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return nil, recon.Errorf(recon.EINVALID, "the form is not properly URL-encoded: bad escape in a field name")
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, recon.FieldError(name, "the form field %s is not properly URL-encoded", printable(name))
		}
		switch {
		case name == "":
			return nil, recon.Errorf(recon.EINVALID, "the form has a field without a name")
		case !utf8.ValidString(name) || !utf8.ValidString(value):
			return nil, recon.Errorf(recon.EINVALID, "the form is not valid UTF-8")
		case seen[name]:
			return nil, recon.FieldError(name, "the form field %s is given more than once", printable(name))
		}
		seen[name] = true
		out = append(out, field{name, value})
	}
	return out, nil
}

// printable shortens a client-supplied name for an error message.
func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// signedFieldNames are the checkout fields the signature covers, as the
// public payment-gateway SDKs sign them (docs/api.md, Payment gateway), in the spec's
// order, and custom_data (docs/api.md, Payment gateway): signed when the
// merchant signs it, else taken as the payer's words and marked unsigned
// (see verifyForm).
var signedFieldNames = []string{
	"merchant", "env", "operation", "payment_method", "order_amount", "currency", "order_invoice_number",
	"order_description", "customer_id", "agreement_id", "agreement_name", "agreement_type",
	"agreement_payment_frequency", "agreement_amount_per_payment", "success_url", "error_url", "cancel_url", "order_id",
	customDataField,
}

// customDataField is the one signed field a form may carry unsigned: the
// public SDKs post it without signing it.
const customDataField = "custom_data"

// signedFields is signedFieldNames as a set.
var signedFields = func() map[string]bool {
	m := make(map[string]bool, len(signedFieldNames))
	for _, n := range signedFieldNames {
		m[n] = true
	}
	return m
}()

// signingString is "k=v,k=v,..." over the signed fields present, in the
// order they were posted, with their decoded values.
func signingString(fields []field) string {
	var b strings.Builder
	for _, f := range fields {
		if !signedFields[f.name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.name)
		b.WriteByte('=')
		b.WriteString(f.value)
	}
	return b.String()
}

// checkBoundaries refuses a signed value that contains "," + NAME + "="
// for a signed field NAME. The signing string joins the pairs with commas,
// unescaped (as the public SDKs sign), so such a value could move a field
// boundary: a merchant-signed order_description of
// "note,order_amount=1,customer_id=y" before order_amount=500000 gives the
// same string as order_description=note, order_amount=1 and customer_id
// "y,order_amount=500000", and the signature would vouch for 1 VND. Without
// such values the string splits back into its fields one way only.
func checkBoundaries(fields []field) error {
	for _, f := range fields {
		if !signedFields[f.name] || !strings.Contains(f.value, ",") || !strings.Contains(f.value, "=") {
			continue
		}
		for _, name := range signedFieldNames {
			if strings.Contains(f.value, ","+name+"=") {
				return recon.FieldError(f.name, "%s must not contain %q: the signature joins fields with commas, so a comma followed by a signed field's name and = would move the field boundaries", f.name, ","+name+"=")
			}
		}
	}
	return nil
}

// sign returns base64(HMAC-SHA256(secret, signingString(fields))).
func sign(secret string, fields []field) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signingString(fields)))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// validSignature compares the posted signature with the expected one in
// constant time.
func validSignature(secret string, fields []field, got string) bool {
	return hmac.Equal([]byte(sign(secret, fields)), []byte(got))
}

// verifyForm checks the signature of a checkout form and says whether it
// covers custom_data (docs/api.md, Payment gateway). A form whose signature
// covers every signed field posted, custom_data included, has its
// custom_data signed. A form signed as the public SDKs sign (custom_data
// left out) is accepted too, its custom_data unsigned: the payer may have
// written or changed it. A signed custom_data cannot be passed off as
// unsigned: the signature without it is not the merchant's. The boundary
// rule (checkBoundaries) applies to custom_data only when it is signed.
func verifyForm(secret string, fields []field, signature string) (customDataSigned bool, err error) {
	rest := make([]field, 0, len(fields))
	posted := false
	for _, f := range fields {
		if f.name == customDataField {
			posted = true
			continue
		}
		rest = append(rest, f)
	}
	if err := checkBoundaries(rest); err != nil {
		return false, err
	}
	switch {
	case posted && validSignature(secret, fields, signature):
		if err := checkBoundaries(fields); err != nil {
			return false, err
		}
		return true, nil
	case validSignature(secret, rest, signature):
		return false, nil
	}
	return false, recon.FieldError("signature", "the signature does not match the form: sign the fields in the order they are posted with your secret key")
}
