package dashboard

// The messages of the signing secrets (settings.go, webhook.go): the key of
// X-Recon-Signature and webhook-signature of the IPN target and of the hub
// webhook, shown once when made or rotated, its whsec_ form, and the end of
// the previous one after a rotation (docs/design.md, D7, "Standard
// Webhooks.").
var signingMessages = []struct{ key, en, vi string }{
	{"signing_secret", "Signing secret", "Khóa ký"},
	{"ipn_signing", "New IPN signing secret (X-Recon-Signature, webhook-signature)", "Khóa ký IPN mới (X-Recon-Signature, webhook-signature)"},
	{"webhook_signing", "New webhook signing secret (X-Recon-Signature, webhook-signature)", "Khóa ký mới của webhook (X-Recon-Signature, webhook-signature)"},
	{"signing_help", "Your server verifies X-Recon-Signature with it (HMAC-SHA256 of the timestamp, a dot and the body), or webhook-signature with a Standard Webhooks library, which takes its whsec_ form. It is never sent in a notification.",
		"Máy chủ của bạn dùng khóa này để kiểm tra X-Recon-Signature (HMAC-SHA256 của dấu thời gian, dấu chấm và nội dung), hoặc kiểm tra webhook-signature bằng thư viện Standard Webhooks với dạng whsec_ của khóa. Khóa không bao giờ được gửi kèm thông báo."},
	{"signing_whsec", "Signing secret, whsec_ form (Standard Webhooks libraries)", "Khóa ký, dạng whsec_ (thư viện Standard Webhooks)"},
	{"previous_signing", "Previous signing secret", "Khóa ký trước"},
	{"previous_signing_until", "The previous signing secret still signs, beside the new one, until", "Khóa ký trước vẫn ký song song với khóa mới đến"},
	{"previous_signing_hint", "Until then a notification verifies with either secret: move your server to the new one before that.",
		"Đến lúc đó, thông báo kiểm tra được bằng khóa nào cũng được: hãy chuyển máy chủ của bạn sang khóa mới trước thời điểm này."},
	{"rotate_signing", "Rotate the signing secret", "Đổi khóa ký"},
	{"c_rotate_signing", "Rotate the signing secret?", "Đổi khóa ký?"},
	{"c_rotate_signing_intro", "A new signing secret, shown once, replaces the current one: every notification sent from now on, retries included, is signed with it, and for 24 hours with the current one too, so that your server can move to the new one without missing a notification. After that only the new one signs.",
		"Khóa ký mới, chỉ hiện một lần, thay khóa hiện tại: mọi thông báo gửi từ bây giờ, kể cả các lần gửi lại, được ký bằng khóa mới, và trong 24 giờ được ký thêm bằng khóa hiện tại, để máy chủ của bạn chuyển sang khóa mới mà không lỡ thông báo nào. Sau đó chỉ khóa mới ký."},
	{"c_target", "Target", "Điểm nhận"},
}

func init() {
	for _, m := range signingMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
