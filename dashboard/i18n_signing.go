package dashboard

// The messages of the signing secrets (settings.go, webhook.go): the key of
// X-Recon-Signature of the IPN target and of the hub webhook, shown once
// when made or rotated.
var signingMessages = []struct{ key, en, vi string }{
	{"signing_secret", "Signing secret", "Khóa ký"},
	{"ipn_signing", "New IPN signing secret (X-Recon-Signature)", "Khóa ký IPN mới (X-Recon-Signature)"},
	{"webhook_signing", "New webhook signing secret (X-Recon-Signature)", "Khóa ký mới của webhook (X-Recon-Signature)"},
	{"signing_help", "Your server verifies X-Recon-Signature with it: HMAC-SHA256 of the timestamp, a dot and the body. It is never sent in a notification.",
		"Máy chủ của bạn dùng khóa này để kiểm tra X-Recon-Signature: HMAC-SHA256 của dấu thời gian, dấu chấm và nội dung. Khóa không bao giờ được gửi kèm thông báo."},
	{"rotate_signing", "Rotate the signing secret", "Đổi khóa ký"},
	{"c_rotate_signing", "Rotate the signing secret?", "Đổi khóa ký?"},
	{"c_rotate_signing_intro", "A new signing secret replaces the current one at once: every notification sent from now on, retries included, is signed with the new one, which is shown once. Your server must verify with it.",
		"Khóa ký mới thay khóa hiện tại ngay lập tức: mọi thông báo gửi từ bây giờ, kể cả các lần gửi lại, được ký bằng khóa mới, khóa chỉ hiện một lần. Máy chủ của bạn phải dùng khóa mới để kiểm tra."},
	{"c_target", "Target", "Điểm nhận"},
}

func init() {
	for _, m := range signingMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
