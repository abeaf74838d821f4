package hub

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"

	"recon"
	"recon/linking"
	"recon/web"
)

// The hosted link page (docs/design.md, D8): /link/{token}, server-rendered,
// Vietnamese by default and English. GET opens (or reopens) the token's
// session; each form POSTs one step back to the same URL. The page is the
// only one of Recon that may be framed (any site: the merchant embeds it);
// it sends no referrer (its URL holds the token), and its forms carry a
// CSRF value bound to the session and are refused cross-origin.

//go:embed templates/*.html
var templateFS embed.FS

var pageTemplates = template.Must(template.New("").ParseFS(templateFS, "templates/*.html"))

// maxPageForm bounds the body of a page step.
const maxPageForm = 16 << 10

// Browser messages the page posts to the embedding window (docs/design.md, D8).
const (
	MsgFinishedLink   = "FINISHED_BANK_ACCOUNT_LINK"
	MsgFinishedUnlink = "FINISHED_BANK_ACCOUNT_UNLINK"
	MsgClose          = "BANKHUB_CLOSE_LINK"
	MsgTokenExpired   = "BANKHUB_TOKEN_EXPIRED"
	MsgSessionExpired = "BANKHUB_SESSION_EXPIRED"
)

// browserMessage is {event, metadata:{account_number, account_type}, timestamp}.
type browserMessage struct {
	Event     string         `json:"event"`
	Metadata  messageAccount `json:"metadata"`
	Timestamp int64          `json:"timestamp"`
}

type messageAccount struct {
	AccountNumber string `json:"account_number"`
	AccountType   string `json:"account_type"`
}

// pageData is what link.html renders.
type pageData struct {
	Lang, Color, Merchant string
	LogoURL               template.URL
	T                     map[string]string
	View                  string
	Open                  bool
	Steps                 []bool
	Sandbox               bool
	CSRF, SessionXID      string
	Error                 string
	ErrorDetail           string // the technical reason of Error, not shown
	Banks                 []recon.Bank
	BankCode, BrandName   string
	AccountType           string
	AccountNumber         string
	HolderName            string
	OTPLength             int
	OTPAction             string
	AttemptsLeft          int
	DoneText              string
	EndTitle, EndText     string
	Retry                 bool
	Back                  bool // the details step's Back: show the bank list again
	RedirectURI           template.URL
	AutoRedirect          template.URL
	Message               *browserMessage
	Nonce                 string
	// Consent shows what linking shares and keeps, before the bank
	// details are asked (the first step of a link).
	Consent bool
	// TestIDs are the sandbox identities a tester may use on this step
	// (sandbox tokens only): every one on the first step, the chosen
	// bank's on the details step. TestOTP is the OTP that works on the
	// OTP step ("" with TestNoOTP: none does, on purpose).
	TestIDs   []testIdentity
	TestOTP   string
	TestNoOTP bool
}

// testIdentity is a sandbox identity as the page lists it.
type testIdentity struct {
	Bank, AccountType, AccountNumber, NationalID, Phone, OTP, Result string
}

// sandboxHelp fills what a tester needs on a sandbox token's step: the
// identities that work (linking.SandboxIdentities) and, on the OTP step,
// the OTP of the session's account.
func sandboxHelp(d *pageData, s *recon.LinkSession) {
	for _, id := range linking.SandboxIdentities() {
		switch d.View {
		case "pick":
		case "details":
			if id.BankCode != s.BankCode || id.AccountType != s.AccountType {
				continue
			}
		case "otp":
			if id.BankCode == s.BankCode && id.AccountNumber == d.AccountNumber {
				d.TestOTP, d.TestNoOTP = id.OTP, id.Fail == linking.FailWrongOTP
			}
			continue
		default:
			continue
		}
		result := d.T["test_links"]
		if id.Fail != "" {
			result = d.T["test_"+id.Fail]
		}
		otp := id.OTP
		if id.Fail == linking.FailWrongOTP {
			otp = "—"
		}
		d.TestIDs = append(d.TestIDs, testIdentity{Bank: bankBrand(id.BankCode), AccountType: d.T[id.AccountType], AccountNumber: id.AccountNumber,
			NationalID: id.NationalID, Phone: id.Phone, OTP: otp, Result: result})
	}
}

// csrfFor binds a form to the token and the session it was rendered for:
// only a page that holds the token can make it.
func csrfFor(token, sessionXID string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("recon link page csrf\x00" + sessionXID))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// setPageHeaders: framing allowed (this page only), scripts by nonce,
// forms to itself, no referrer, no caching.
func setPageHeaders(w http.ResponseWriter, nonce string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; script-src 'nonce-"+nonce+
		"'; form-action 'self'; base-uri 'none'; frame-ancestors *")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// linkPage serves GET and POST /link/{token}.
func (h *Handler) linkPage(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	hash := recon.HashLinkToken(token)
	ctx := r.Context()
	t, s, err := h.Store.LinkTokenByHash(ctx, hash)
	if err != nil {
		h.renderMissing(w, r, err)
		return
	}
	d := h.newPageData(r, t)
	if t.Status != recon.LinkTokenActive {
		h.renderEnded(w, d, t, nil)
		return
	}
	conn, err := h.connector(t.Sandbox)
	if err != nil {
		h.logger().WarnContext(r.Context(), "link page: no bank connector", "err", err)
		d.View, d.EndTitle, d.EndText = "ended", d.T["unavailable_title"], d.T["unavailable"]
		h.render(w, http.StatusServiceUnavailable, d)
		return
	}
	d.Banks = conn.Banks()
	if r.Method == http.MethodGet {
		t, s, err = h.Store.StepLinkSession(ctx, hash, recon.LinkStep{Kind: recon.StepOpen})
		if err != nil {
			h.stepFailed(w, r, d, hash, err)
			return
		}
		h.renderSession(ctx, w, d, token, t, s, http.StatusOK)
		return
	}
	step, pageErr, err := h.readStep(r, token, t, s, conn)
	if err != nil {
		h.stepFailed(w, r, d, hash, err)
		return
	}
	if pageErr != "" { // the bank refused the details: the session stays where it is
		d.Error = pageErr
		if step.Kind == recon.StepDetails {
			d.AccountNumber = step.AccountNumber
		}
		h.renderSession(ctx, w, d, token, t, s, http.StatusOK)
		return
	}
	if step.Kind == "back" {
		d.Back = true
		h.renderSession(ctx, w, d, token, t, s, http.StatusOK)
		return
	}
	t2, s2, err := h.Store.StepLinkSession(ctx, hash, step)
	if err != nil {
		h.stepFailed(w, r, d, hash, err)
		return
	}
	if step.Kind == recon.StepLinkOTP && !step.OTPOK && s2.Status == recon.LinkSessionOpen ||
		step.Kind == recon.StepUnlinkOTP && !step.OTPOK && s2.Status == recon.LinkSessionOpen {
		d.Error = d.T["otp_wrong"]
	}
	h.renderSession(ctx, w, d, token, t2, s2, http.StatusOK)
}

// readStep checks the form (CSRF, session), then asks the linking service
// for its step (linking.Service.ReadStep: what the bank says). A refusal the
// user can correct comes back as pageErr, in the token's language.
func (h *Handler) readStep(r *http.Request, token string, t *recon.LinkToken, s *recon.LinkSession, conn recon.BankConnector) (recon.LinkStep, string, error) {
	var st recon.LinkStep
	if err := r.ParseForm(); err != nil {
		return st, "", recon.Errorf(recon.EINVALID, "the form could not be read")
	}
	f := r.PostForm
	if s == nil || f.Get("session") != s.XID {
		return st, "", recon.ErrSessionMoved()
	}
	if !hmac.Equal([]byte(f.Get("csrf")), []byte(csrfFor(token, s.XID))) {
		return st, "", recon.Errorf(recon.EFORBIDDEN, "the form's security value is wrong: reload the page")
	}
	st, refusal, err := h.Links.ReadStep(r.Context(), t, s, conn, linking.StepForm{Action: f.Get("action"),
		Bank: f.Get("bank"), AccountType: f.Get("account_type"), AccountNumber: f.Get("account_number"),
		NationalID: f.Get("national_id"), Phone: f.Get("phone"), OTP: f.Get("otp"), Choice: f.Get("choice")})
	if refusal != "" {
		return st, dict(t.Language)[refusal], err
	}
	return st, "", err
}

// stepFailed renders what a refused step means: the token ended (revoked,
// expired, used), the session moved on (another tab, or it was abandoned),
// or input the page cannot take.
func (h *Handler) stepFailed(w http.ResponseWriter, r *http.Request, d *pageData, hash string, err error) {
	t, s, rerr := h.Store.LinkTokenByHash(r.Context(), hash)
	if rerr != nil {
		h.renderMissing(w, r, rerr)
		return
	}
	switch {
	case t.Status != recon.LinkTokenActive:
		h.renderEnded(w, d, t, nil)
	case recon.ErrorCode(err) == recon.ECONFLICT && strings.Contains(recon.ErrorMessage(err), "already linked"):
		d.Error = d.T["already_linked"]
		h.renderSession(r.Context(), w, d, r.PathValue("token"), t, s, http.StatusConflict)
	case recon.ErrorCode(err) == recon.ECONFLICT || s == nil:
		d.View, d.EndTitle, d.EndText, d.Retry = "ended", d.T["session_expired_title"], d.T["session_expired"], true
		d.Message = &browserMessage{Event: MsgSessionExpired, Timestamp: h.now().Unix()}
		h.render(w, http.StatusConflict, d)
	case recon.ErrorCode(err) == recon.EINVALID || recon.ErrorCode(err) == recon.EFORBIDDEN:
		// A tampered or stale form: the person reads what to do in the
		// page's language; the reason stays in the markup for a developer.
		d.Error, d.ErrorDetail = d.T["form_refused"], recon.ErrorMessage(err)
		h.renderSession(r.Context(), w, d, r.PathValue("token"), t, s, http.StatusBadRequest)
	default:
		h.logger().ErrorContext(r.Context(), "link page", "request_id", web.RequestID(r.Context()), "err", err)
		d.View, d.EndTitle, d.EndText = "ended", d.T["error_title"], d.T["error"]
		h.render(w, pageErrorStatus(w, err), d)
	}
}

func (h *Handler) newPageData(r *http.Request, t *recon.LinkToken) *pageData {
	lang := t.Language
	d := &pageData{Lang: lang, T: dict(lang), Color: "#1f6feb", Merchant: "Recon", Sandbox: t.Sandbox}
	if t.RedirectURI != "" {
		d.RedirectURI = template.URL(t.RedirectURI) // checked when the token was made (recon.CheckRedirectURI)
	}
	if b, err := h.Store.HubBranding(r.Context(), t.Tenant); err == nil {
		{
			if b.DisplayName != "" {
				d.Merchant = b.DisplayName
			}
			if b.PrimaryColor != "" {
				d.Color = b.PrimaryColor
			}
			if b.LogoURL != "" {
				d.LogoURL = template.URL(b.LogoURL)
			}
		}
	}
	return d
}

// renderSession renders the page of the session's step, or its end.
func (h *Handler) renderSession(ctx context.Context, w http.ResponseWriter, d *pageData, token string, t *recon.LinkToken, s *recon.LinkSession, status int) {
	if s == nil {
		if t.Status != recon.LinkTokenActive {
			h.renderEnded(w, d, t, nil)
			return
		}
		d.View, d.EndTitle, d.EndText, d.Retry = "ended", d.T["session_expired_title"], d.T["session_expired"], true
		h.render(w, status, d)
		return
	}
	d.SessionXID, d.CSRF = s.XID, csrfFor(token, s.XID)
	for _, b := range d.Banks {
		if b.Code == s.BankCode {
			d.BrandName, d.OTPLength = b.BrandName, b.OTPLength
		}
	}
	d.BankCode, d.AccountType, d.HolderName = s.BankCode, s.AccountType, s.HolderName
	if d.AccountNumber == "" {
		d.AccountNumber = s.AccountNumber
	}
	msgAccount := messageAccount{AccountNumber: s.AccountNumber, AccountType: s.AccountType}
	switch s.Status {
	case recon.LinkSessionOpen:
		d.Open = true
	case recon.LinkSessionCompleted:
		d.View, d.AutoRedirect = "done", d.RedirectURI
		ev := MsgFinishedLink
		d.DoneText = d.T["linked"]
		if t.Purpose == recon.LinkPurposeUnlink {
			ev, d.DoneText = MsgFinishedUnlink, d.T["unlinked"]
			if s.State == recon.LinkStateFinishedUnlink && d.AccountNumber != "" {
				d.DoneText = d.T["unlinked"]
			}
		}
		d.Message = &browserMessage{Event: ev, Metadata: msgAccount, Timestamp: h.now().Unix()}
		h.render(w, status, d)
		return
	case recon.LinkSessionAbandoned:
		d.View, d.EndTitle, d.EndText, d.AutoRedirect = "ended", d.T["closed_title"], d.T["closed"], d.RedirectURI
		d.Message = &browserMessage{Event: MsgClose, Metadata: msgAccount, Timestamp: h.now().Unix()}
		h.render(w, status, d)
		return
	case recon.LinkSessionFailed:
		d.View, d.EndTitle, d.Retry = "ended", d.T["failed_title"], true
		d.EndText = d.T["failed_otp"]
		if strings.Contains(s.Reason, "unavailable") {
			d.EndText = d.T["failed_bank"]
		}
		h.render(w, status, d)
		return
	default:
		h.renderEnded(w, d, t, s)
		return
	}
	purpose := t.Purpose
	switch {
	case purpose == recon.LinkPurposeLink && (s.State == recon.LinkStateInitialized || s.State == recon.LinkStateRequestLink && d.Back):
		d.View, d.Steps, d.Consent = "pick", []bool{true, false, false, false}, true
	case purpose == recon.LinkPurposeLink && s.State == recon.LinkStateRequestLink:
		d.View, d.Steps = "details", []bool{true, true, false, false}
	case purpose == recon.LinkPurposeLink && s.State == recon.LinkStateConfirmLink:
		d.View, d.Steps, d.OTPAction = "otp", []bool{true, true, true, false}, recon.StepLinkOTP
		d.AttemptsLeft = recon.MaxOTPAttempts - s.OTPAttempts
	case s.State == recon.LinkStateInitialized:
		d.View, d.Steps = "unlink", []bool{true, false, false}
		if a, err := h.Store.LinkedAccount(ctx, t.Tenant, t.BankAccountID); err == nil {
			d.AccountNumber, d.HolderName, d.AccountType = a.AccountNumber, a.HolderName, a.AccountType
			d.BrandName = bankBrand(a.BankCode)
		}
	case s.State == recon.LinkStateConfirmUnlink:
		d.View, d.Steps, d.OTPAction = "otp", []bool{true, true, false}, recon.StepUnlinkOTP
		d.AttemptsLeft = recon.MaxOTPAttempts - s.OTPAttempts
	case s.State == recon.LinkStateChooseUnlink:
		d.View, d.Steps = "choose", []bool{true, true, true}
	}
	if t.Sandbox {
		sandboxHelp(d, s)
	}
	h.render(w, status, d)
}

// renderEnded renders a token that can no longer be used.
func (h *Handler) renderEnded(w http.ResponseWriter, d *pageData, t *recon.LinkToken, _ *recon.LinkSession) {
	d.View = "ended"
	switch t.Status {
	case recon.LinkTokenUsed:
		d.EndTitle, d.EndText = d.T["used_title"], d.T["used"]
	default:
		d.EndTitle, d.EndText = d.T["expired_title"], d.T["expired"]
		d.Message = &browserMessage{Event: MsgTokenExpired, Timestamp: h.now().Unix()}
	}
	h.render(w, http.StatusGone, d)
}

func (h *Handler) renderMissing(w http.ResponseWriter, r *http.Request, err error) {
	d := &pageData{Lang: "vi", T: dict("vi"), Color: "#1f6feb", Merchant: "Recon", View: "ended"}
	status := http.StatusNotFound
	d.EndTitle, d.EndText = d.T["missing_title"], d.T["missing"]
	if recon.ErrorCode(err) != recon.ENOTFOUND {
		h.logger().ErrorContext(r.Context(), "link page", "request_id", web.RequestID(r.Context()), "err", err)
		status, d.EndTitle, d.EndText = pageErrorStatus(w, err), d.T["error_title"], d.T["error"]
	}
	h.render(w, status, d)
}

// pageErrorStatus is the status of the page of an unexpected error: 503
// with Retry-After when the database is away for a moment (docs/design.md,
// Losing the primary; the page says to try again later), else 500.
func pageErrorStatus(w http.ResponseWriter, err error) int {
	if recon.ErrorCode(err) == recon.EUNAVAILABLE {
		web.SetRetryAfter(w.Header(), err)
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (h *Handler) render(w http.ResponseWriter, status int, d *pageData) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	d.Nonce = base64.RawStdEncoding.EncodeToString(nonce)
	var buf bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&buf, "link.html", d); err != nil {
		h.logger().Error("rendering the link page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w, d.Nonce)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
