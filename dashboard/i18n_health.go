package dashboard

// The messages of endpoint health (health.go; docs/dashboard.md, Endpoint health;
// docs/design.md, D7), the audit log's entries of it and its alert, and the
// IPN type ENDPOINT_DISABLED, in both languages.
var healthMessages = []struct{ key, en, vi string }{
	{"eh_disabled_by_recon", "Disabled by Recon on", "Recon đã tắt địa chỉ này lúc"},
	{"eh_disabled_at", "Disabled by Recon on", "Recon đã tắt lúc"},
	{"eh_why", "Why", "Lý do"},
	{"eh_waiting", "Notifications waiting", "Thông báo đang chờ"},
	{"eh_enable", "Re-enable", "Bật lại"},
	{"eh_enable_replay", "Re-enable and replay", "Bật lại và gửi lại"},
	{"eh_enable_intro", "The target becomes active again: new notifications are sent to it. Those it missed while disabled stay waiting; you can replay them later.",
		"Địa chỉ được bật lại: thông báo mới sẽ được gửi tới địa chỉ này. Các thông báo bị lỡ khi địa chỉ bị tắt vẫn chờ; bạn có thể gửi lại sau."},
	{"eh_enable_replay_intro", "The target becomes active again, and the notifications it missed while disabled are sent now, in their original order.",
		"Địa chỉ được bật lại, và các thông báo bị lỡ khi địa chỉ bị tắt được gửi ngay, theo đúng thứ tự ban đầu."},
	{"eh_enabled", "The target is active again", "Địa chỉ đã được bật lại"},
	{"eh_replayed", "missed notifications queued again", "thông báo bị lỡ được xếp hàng gửi lại"},
	{"au_target.disabled", "Target disabled by Recon (failing for 3 days)", "Recon tắt địa chỉ nhận (lỗi liên tục 3 ngày)"},
	{"au_target.enabled", "Target re-enabled", "Bật lại địa chỉ nhận"},
	{"au_via_recon", "by Recon", "bởi Recon"},
	{"af_disabled_by", "Disabled by", "Bị tắt bởi"},
	{"af_why", "Why", "Lý do"},
	{"af_replay", "Notifications replayed", "Thông báo gửi lại"},
	{"al_kind_endpoint_disabled", "A notification target was disabled", "Địa chỉ nhận thông báo bị tắt"},
	{"nt_endpoint_disabled", "Another notification target of yours was disabled by Recon", "Một địa chỉ nhận thông báo khác của bạn bị Recon tắt"},
}

func init() {
	for _, m := range healthMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
