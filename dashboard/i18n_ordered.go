package dashboard

// The messages of the ordered setting of a notification target (the IPN and
// hub webhook forms of settings.html; docs/design.md, D7, "Ordered
// targets"; docs/dashboard.md, "Settings, bank accounts and sandbox"), in
// both languages.
var orderedMessages = []struct{ key, en, vi string }{
	{"ordered", "Deliver in order, one at a time", "Gửi theo đúng thứ tự, từng thông báo một"},
	{"ordered_help", "Each notification is sent only after the one before it was received or gave up after its retries, " +
		"so your server sees them in the order they happened (a linked account after its finished session). " +
		"While your server fails, everything after the failing notification waits; it is slower than sending several at once.",
		"Mỗi thông báo chỉ được gửi sau khi thông báo trước đó đã được nhận hoặc đã hết số lần thử lại, " +
			"nên máy chủ của bạn nhận chúng đúng thứ tự xảy ra (tài khoản được liên kết sau phiên đã hoàn tất). " +
			"Khi máy chủ của bạn lỗi, mọi thông báo sau thông báo lỗi đều phải chờ; cách này chậm hơn gửi nhiều thông báo cùng lúc."},
}

func init() {
	for _, m := range orderedMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
