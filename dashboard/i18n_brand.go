package dashboard

// The words of the branding card (brand.go): the name, logo and colours
// the payer's checkout page and the hub's link page show, and why a value
// is refused (recon.HubBranding.Validate's Say keys).
var brandMessages = []struct{ key, en, vi string }{
	{"br_title", "Branding", "Thương hiệu"},
	{"br_help", "The name, logo and colours the payer sees on your checkout page and on the bank-linking page. They belong to the data shown now: live and test data each have their own.",
		"Tên, logo và màu mà người thanh toán thấy trên trang thanh toán và trang liên kết ngân hàng của bạn. Dữ liệu thật và dữ liệu thử có thương hiệu riêng."},
	{"br_display_name", "Display name", "Tên hiển thị"},
	{"br_display_name_help", "At most 100 characters. Empty: the checkout page shows the company's full name.", "Tối đa 100 ký tự. Để trống: trang thanh toán hiển thị tên đầy đủ của công ty."},
	{"br_logo_url", "Logo address", "Địa chỉ logo"},
	{"br_logo_help", "An address starting with https://, at most 2000 characters, not on a private network. Empty: no logo.",
		"Địa chỉ bắt đầu bằng https://, tối đa 2000 ký tự, không thuộc mạng nội bộ. Để trống: không có logo."},
	{"br_primary_color", "Main colour", "Màu chính"},
	{"br_secondary_color", "Second colour", "Màu phụ"},
	{"br_color_help", "In the form #rrggbb, for example #0a7d3b. Empty: the default colour.", "Dạng #rrggbb, ví dụ #0a7d3b. Để trống: màu mặc định."},
	{"br_none", "(none)", "(chưa có)"},
	{"br_saved", "The branding is saved.", "Đã lưu thương hiệu."},
	{"br_save", "Save the branding", "Lưu thương hiệu"},
	{"c_branding", "Change the branding?", "Đổi thương hiệu?"},
	{"c_branding_intro", "Payers will see this name, logo and these colours on the checkout page and the bank-linking page from now on.",
		"Từ bây giờ, người thanh toán sẽ thấy tên, logo và màu này trên trang thanh toán và trang liên kết ngân hàng."},
	{"br_bad_display_name", "The display name must be at most 100 characters.", "Tên hiển thị tối đa 100 ký tự."},
	{"br_bad_primary_color", "The main colour must be in the form #rrggbb, for example #0a7d3b.", "Màu chính phải có dạng #rrggbb, ví dụ #0a7d3b."},
	{"br_bad_secondary_color", "The second colour must be in the form #rrggbb, for example #0a7d3b.", "Màu phụ phải có dạng #rrggbb, ví dụ #0a7d3b."},
	{"br_bad_logo_https", "The logo address must start with https:// (a secure address).", "Địa chỉ logo phải bắt đầu bằng https:// (địa chỉ bảo mật)."},
	{"br_bad_logo_long", "The logo address is too long: at most 2000 characters.", "Địa chỉ logo quá dài: tối đa 2000 ký tự."},
	{"br_bad_logo_chars", "The logo address must not contain spaces, quotes, < > or \\.", "Địa chỉ logo không được chứa dấu cách, dấu nháy, < > hoặc \\."},
	{"br_bad_logo_private", "The logo address points to a private or local address (such as 127.0.0.1, 10.x.x.x, 192.168.x.x or localhost): payers cannot load it.",
		"Địa chỉ logo trỏ tới địa chỉ nội bộ (như 127.0.0.1, 10.x.x.x, 192.168.x.x hoặc localhost): người thanh toán không tải được."},
}

func init() {
	for _, m := range brandMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
