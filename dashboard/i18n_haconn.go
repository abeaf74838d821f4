package dashboard

// The page of a database that is away for a moment (docs/design.md, Losing
// the primary): the keys sqlstore's EUNAVAILABLE errors say (recon.Say),
// shown on a 503 with Retry-After.
var unavailableMessages = []struct{ key, en, vi string }{
	{"db_unavailable", "The service is briefly unavailable (the database is switching over). Try again in a few seconds.",
		"Dịch vụ tạm thời gián đoạn (cơ sở dữ liệu đang chuyển đổi). Vui lòng thử lại sau vài giây."},
	{"db_read_only", "The service is briefly unavailable for changes (the database is switching over): nothing was changed. Try again in a few seconds.",
		"Dịch vụ tạm thời chưa nhận thay đổi (cơ sở dữ liệu đang chuyển đổi): chưa có gì thay đổi. Vui lòng thử lại sau vài giây."},
	{"db_retry", "The database gave up on this request because of others made at the same time: nothing was changed. Try again.",
		"Cơ sở dữ liệu đã dừng yêu cầu này vì có các yêu cầu khác cùng lúc: chưa có gì thay đổi. Vui lòng thử lại."},
}

func init() {
	for _, m := range unavailableMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
