package team

import (
	"html/template"
	"strings"
	"time"

	"recon/mail"
)

// The e-mails, in the recipient's language (recon.User.Lang, Vietnamese
// by default), each with a plain-text part and an HTML one.

type emailText struct {
	subject, greeting, body, action, expires, ignore string
}

var inviteTexts = map[string]emailText{
	"vi": {
		subject:  "Lời mời tham gia %s trên Recon",
		greeting: "Xin chào,",
		body:     "%s mời bạn tham gia %s trên Recon, nơi đối soát các khoản thanh toán của công ty. Bấm vào liên kết dưới đây để đặt mật khẩu và đăng nhập.",
		action:   "Chấp nhận lời mời",
		expires:  "Liên kết chỉ dùng được một lần và hết hạn lúc %s.",
		ignore:   "Nếu bạn không chờ lời mời này, hãy bỏ qua e-mail.",
	},
	"en": {
		subject:  "Invitation to %s on Recon",
		greeting: "Hello,",
		body:     "%s invites you to join %s on Recon, where the company reconciles its payments. Follow the link below to set your password and sign in.",
		action:   "Accept the invitation",
		expires:  "The link works once and expires at %s.",
		ignore:   "If you did not expect this invitation, ignore this e-mail.",
	},
}

var resetTexts = map[string]emailText{
	"vi": {
		subject:  "Đặt lại mật khẩu Recon",
		greeting: "Xin chào,",
		body:     "Có người (có thể là bạn) đã yêu cầu đặt lại mật khẩu Recon của địa chỉ e-mail này%s. Bấm vào liên kết dưới đây để chọn mật khẩu mới.",
		action:   "Đặt mật khẩu mới",
		expires:  "Liên kết chỉ dùng được một lần và hết hạn lúc %s.",
		ignore:   "Nếu bạn không yêu cầu, hãy bỏ qua e-mail: mật khẩu của bạn không thay đổi.",
	},
	"en": {
		subject:  "Reset your Recon password",
		greeting: "Hello,",
		body:     "Someone (perhaps you) asked to reset the Recon password of this e-mail address%s. Follow the link below to choose a new password.",
		action:   "Choose a new password",
		expires:  "The link works once and expires at %s.",
		ignore:   "If you did not ask for it, ignore this e-mail: your password stays as it is.",
	},
}

var companyFor = map[string]string{"vi": " tại %s", "en": " at %s"}

func textsOf(m map[string]emailText, lang string) (emailText, string) {
	if t, ok := m[lang]; ok {
		return t, lang
	}
	return m["vi"], "vi"
}

// timeText is a time as the language writes it, in the time's zone.
func timeText(lang string, t time.Time) string {
	if lang == "en" {
		return t.Format("15:04 on 2 Jan 2006")
	}
	return t.Format("15:04 ngày 02/01/2006")
}

func inviteMessage(lang, company, inviter, link string, expires time.Time) mail.Message {
	t, lang := textsOf(inviteTexts, lang)
	return compose(lang, sprintf(t.subject, company), t.greeting, sprintf(t.body, inviter, company), t.action, link,
		sprintf(t.expires, timeText(lang, expires)), t.ignore)
}

func resetMessage(lang, company, link string, expires time.Time) mail.Message {
	t, lang := textsOf(resetTexts, lang)
	at := ""
	if company != "" {
		at = sprintf(companyFor[lang], company)
	}
	return compose(lang, t.subject, t.greeting, sprintf(t.body, at), t.action, link,
		sprintf(t.expires, timeText(lang, expires)), t.ignore)
}

// sprintf replaces each %s of format in turn (no other verbs: the names
// are the merchant's and printed as they are).
func sprintf(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

var htmlMail = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #1a1a1a">
<p>{{.Greeting}}</p>
<p>{{.Body}}</p>
<p><a href="{{.Link}}" style="display: inline-block; padding: 0.6em 1.2em; background: #0b5cad; color: #fff; text-decoration: none; border-radius: 4px">{{.Action}}</a></p>
<p style="font-size: 0.9em">{{.Link}}</p>
<p style="font-size: 0.9em; color: #555">{{.Expires}} {{.Ignore}}</p>
</body></html>`))

func compose(lang, subject, greeting, body, action, link, expires, ignore string) mail.Message {
	text := greeting + "\n\n" + body + "\n\n" + action + ":\n" + link + "\n\n" + expires + "\n" + ignore + "\n\n-- \nRecon\n"
	var b strings.Builder
	_ = htmlMail.Execute(&b, map[string]string{"Lang": lang, "Subject": subject, "Greeting": greeting, "Body": body,
		"Action": action, "Link": link, "Expires": expires, "Ignore": ignore})
	return mail.Message{Subject: subject, Text: text, HTML: b.String()}
}
