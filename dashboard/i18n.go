package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// lang is a language of the dashboard: "vi" or "en".
type lang string

// langOf is the language the browser chose with the switch (a cookie), else
// the first of Accept-Language the dashboard speaks, else Vietnamese.
func (h *Handler) langOf(r *http.Request) lang {
	if l := lang(h.cookie(r, langCookie)); messages[l] != nil {
		return l
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if l := lang(base); messages[l] != nil {
			return l
		}
	}
	return "vi"
}

// setLang serves the language switch: GET /dashboard/lang/{lang}?back=...
// (a link, no state but the cookie), back to the page it came from.
func (h *Handler) setLang(w http.ResponseWriter, r *http.Request) {
	l := lang(r.PathValue("lang"))
	if messages[l] == nil {
		h.writeError(w, r, nil, errNotFound())
		return
	}
	h.setCookie(w, langCookie, string(l), 365*24*3600)
	back := r.URL.Query().Get("back")
	if back != "/dashboard/signin" {
		back = localPath(back)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// T is the message key in the language (the key itself when missing, which
// the i18n test forbids).
func (l lang) T(key string) string {
	if m, ok := messages[l][key]; ok {
		return m
	}
	return key
}

// Money formats whole VND the way the language writes it.
func (l lang) Money(vnd int64) string {
	sep, unit := ",", " VND"
	if l == "vi" {
		sep, unit = ".", " ₫"
	}
	return groupDigits(vnd, sep) + unit
}

// Count formats a count with the language's thousands separator.
func (l lang) Count(n int64) string {
	if l == "vi" {
		return groupDigits(n, ".")
	}
	return groupDigits(n, ",")
}

func groupDigits(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Plural is n and the noun of key in the number n takes: the messages
// key+"_1" and key+"_n".
func (l lang) Plural(n int64, key string) string {
	if n == 1 {
		return l.Count(n) + " " + l.T(key+"_1")
	}
	return l.Count(n) + " " + l.T(key+"_n")
}

// Time formats a time in the business time zone.
func (h *Handler) timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(h.Location).Format(timeLayout)
}

const timeLayout = "2006-01-02 15:04:05"

// messages holds every text of the pages, per language.
var messages = map[lang]map[string]string{
	"en": {
		"app":                          "Recon dashboard",
		"skip":                         "Skip to content",
		"nav":                          "Main",
		"home":                         "Home",
		"transactions":                 "Transactions",
		"orders":                       "Orders",
		"signin":                       "Sign in",
		"signout":                      "Sign out",
		"company_id":                   "Company ID",
		"email":                        "E-mail",
		"password":                     "Password",
		"session_ended":                "Your session has ended. Please sign in again.",
		"err_company_id":               "The company ID must be a number.",
		"err_password":                 "The company, e-mail address or password is wrong.",
		"err_throttled":                "Too many failed sign-ins.",
		"live":                         "Live",
		"test":                         "Test",
		"mode":                         "Data",
		"switch_test":                  "Switch to test data",
		"switch_live":                  "Switch to live data",
		"test_banner":                  "TEST MODE: you are looking at test data. Nothing here is real money.",
		"language":                     "Language",
		"today":                        "Today",
		"this_month":                   "This month",
		"money_in":                     "Money in",
		"money_out":                    "Money out",
		"matched":                      "Matched",
		"unmatched":                    "Unmatched",
		"transfers_1":                  "transfer",
		"transfers_n":                  "transfers",
		"orders_1":                     "order",
		"orders_n":                     "orders",
		"underpaid":                    "Underpaid orders",
		"short":                        "still owed",
		"failing":                      "Failing notifications",
		"dead":                         "Dead notifications",
		"chart_title":                  "Last 30 days: money in and out per day, and the share of money in that matched an order",
		"match_rate":                   "Match rate",
		"chart_table":                  "The chart's figures as a table",
		"day":                          "Day",
		"no_money":                     "Your role does not show money data. Ask an Admin for the view_transactions permission.",
		"filter":                       "Filter",
		"apply":                        "Apply",
		"reset":                        "Reset",
		"export_csv":                   "Export CSV",
		"bank_account":                 "Bank account",
		"any":                          "Any",
		"account_number":               "Account number",
		"reference":                    "Reference",
		"from_date":                    "From",
		"to_date":                      "To",
		"amount_in":                    "Amount in",
		"amount_out":                   "Amount out",
		"per_page":                     "Per page",
		"date":                         "Date",
		"memo":                         "Memo",
		"code":                         "Code",
		"balance":                      "Balance",
		"sub_account":                  "Virtual account",
		"none":                         "none",
		"total":                        "total",
		"page":                         "Page",
		"previous":                     "Previous",
		"next":                         "Next",
		"no_rows":                      "Nothing matches.",
		"transaction":                  "Transaction",
		"decisions":                    "Match decisions",
		"outcome":                      "Outcome",
		"rule":                         "Rule",
		"order":                        "Order",
		"why":                          "Why",
		"no_decision":                  "No match decision: the memo holds no payment code.",
		"search":                       "Search",
		"status":                       "Status",
		"customer":                     "Customer",
		"amount":                       "Amount",
		"paid":                         "Paid",
		"created":                      "Created",
		"description":                  "Description",
		"payment_code":                 "Payment code",
		"timeline":                     "Timeline",
		"ev_created":                   "Order created",
		"ev_captured":                  "Captured",
		"ev_cancelled":                 "Cancelled",
		"ev_voided":                    "Voided",
		"notifications":                "Notifications",
		"event":                        "Event",
		"attempts":                     "Attempts",
		"last_error":                   "Last error",
		"no_notif":                     "No notification about this order.",
		"void":                         "Void the payment",
		"cancel":                       "Cancel the order",
		"void_help":                    "The order becomes cancelled and a TRANSACTION_VOID notification is sent.",
		"cancel_help":                  "The unpaid order becomes cancelled. No notification is sent.",
		"error":                        "Error",
		"back_home":                    "Back to the dashboard",
		"st_AUTHENTICATION_NOT_NEEDED": "Awaiting payment",
		"st_CAPTURED":                  "Captured",
		"st_CANCELLED":                 "Cancelled",
		"signed_in_as":                 "Signed in as",
		// Settings, bank accounts, sandbox.
		"settings":         "Settings",
		"bank_accounts":    "Bank accounts",
		"sandbox":          "Sandbox",
		"secret_once":      "Copy it now: it is shown this once and never again.",
		"ipn_secret":       "New IPN secret (X-Secret-Key)",
		"merchant_secret":  "New merchant secret key",
		"formats":          "Payment-code formats",
		"formats_test":     "Payment-code formats are shared by live and test data: switch to live data to change them. You can still try a memo.",
		"formats_saved":    "The formats are saved.",
		"prefix":           "Prefix",
		"suffix_from":      "Suffix from",
		"suffix_to":        "Suffix to",
		"char_type":        "Characters",
		"active":           "Active",
		"formats_help":     "Fill the blank row to add a format; empty a row's prefix and lengths to remove it.",
		"try_memo":         "Try a memo",
		"try":              "Try the memo with these formats",
		"save_formats":     "Save the formats",
		"normalized":       "Normalised memo",
		"chosen":           "chosen",
		"format_n":         "format",
		"targets":          "Notification targets",
		"test_sent":        "A test notification is on its way: see it in the delivery log.",
		"kind":             "Kind",
		"auth_type":        "Authentication",
		"secret":           "Secret",
		"actions":          "Actions",
		"yes":              "yes",
		"no":               "no",
		"send_test":        "Send a test notification",
		"rotate_secret":    "Rotate the secret",
		"no_targets":       "No notification target is set (PUT /v1/ipn, POST /v1/webhook).",
		"merchant":         "Merchant credentials",
		"rotate_help":      "The old secret stops working at once.",
		"no_merchant":      "No merchant credentials (recon merchant credentials).",
		"users":            "Users and roles",
		"role":             "Role",
		"permissions":      "Permissions",
		"change_role":      "Change",
		"save":             "Save",
		"new_user":         "New user",
		"create_user":      "Create the user",
		"holder":           "Holder",
		"last_tx":          "Last transaction",
		"link_status":      "Hub link",
		"hub_company":      "hub company",
		"unlinked":         "not linked through the hub",
		"no_accounts":      "No bank account yet.",
		"gaps":             "Balance discontinuities",
		"gap_before":       "missing transactions between the previous transaction and",
		"expected":         "expected",
		"reported":         "bank reported",
		"gap":              "gap",
		"no_gaps":          "No discontinuity: every balance follows from the previous one.",
		"upload":           "Upload a statement",
		"upload_failed":    "Nothing was imported.",
		"bad_rows":         "Rows to fix",
		"imported":         "Imported",
		"duplicates":       "Already there",
		"statement_file":   "Statement file (CSV, camt.053, MT940)",
		"upload_help":      "All rows or none: a file with a bad row stores nothing and lists the rows to fix.",
		"upload_button":    "Upload",
		"link_bank":        "Link a bank",
		"no_connector":     "This server has no connector to real banks: in live mode, banks cannot be linked here. Switch to test data to link a sandbox bank.",
		"sb_intro":         "Test data only: play a customer's bank, nothing here moves real money.",
		"sb_transfer":      "Simulate a transfer",
		"sb_send":          "Send the transfer",
		"sb_pay":           "Pay an order",
		"invoice":          "Invoice number",
		"sb_pay_help":      "A transfer of the amount still owed, with the order's payment code as the memo.",
		"sb_transfer_done": "The transfer arrived:",
		"sb_event_done":    "The hub event was made (time-driven events come with the next sweep).",
		"duplicate":        "duplicate",
		"sb_hub":           "Fire a hub event",
		"sb_hub_help":      "Made through the hub's own paths, as recon trigger does.",
		"sb_fire":          "Fire the event",
		"sb_identities":    "Sandbox bank identities",
		"bank":             "Bank",
		"account_type":     "Type",
		"national_id":      "National ID",
		"phone":            "Phone",
		"fails_with":       "Fails with",
	},
	"vi": {
		"app":                          "Bảng điều khiển Recon",
		"skip":                         "Bỏ qua đến nội dung",
		"nav":                          "Chính",
		"home":                         "Tổng quan",
		"transactions":                 "Giao dịch",
		"orders":                       "Đơn hàng",
		"signin":                       "Đăng nhập",
		"signout":                      "Đăng xuất",
		"company_id":                   "Mã công ty",
		"email":                        "Email",
		"password":                     "Mật khẩu",
		"session_ended":                "Phiên làm việc đã kết thúc. Vui lòng đăng nhập lại.",
		"err_company_id":               "Mã công ty phải là một số.",
		"err_password":                 "Mã công ty, email hoặc mật khẩu không đúng.",
		"err_throttled":                "Đăng nhập sai quá nhiều lần.",
		"live":                         "Thật",
		"test":                         "Thử nghiệm",
		"mode":                         "Dữ liệu",
		"switch_test":                  "Chuyển sang dữ liệu thử nghiệm",
		"switch_live":                  "Chuyển sang dữ liệu thật",
		"test_banner":                  "CHẾ ĐỘ THỬ NGHIỆM: bạn đang xem dữ liệu thử nghiệm. Không có khoản tiền nào ở đây là thật.",
		"language":                     "Ngôn ngữ",
		"today":                        "Hôm nay",
		"this_month":                   "Tháng này",
		"money_in":                     "Tiền vào",
		"money_out":                    "Tiền ra",
		"matched":                      "Đã khớp",
		"unmatched":                    "Chưa khớp",
		"transfers_1":                  "giao dịch",
		"transfers_n":                  "giao dịch",
		"orders_1":                     "đơn hàng",
		"orders_n":                     "đơn hàng",
		"underpaid":                    "Đơn thanh toán thiếu",
		"short":                        "còn thiếu",
		"failing":                      "Thông báo đang lỗi",
		"dead":                         "Thông báo đã dừng gửi",
		"chart_title":                  "30 ngày qua: tiền vào và ra mỗi ngày, và tỷ lệ tiền vào đã khớp với đơn hàng",
		"match_rate":                   "Tỷ lệ khớp",
		"chart_table":                  "Số liệu của biểu đồ dạng bảng",
		"day":                          "Ngày",
		"no_money":                     "Vai trò của bạn không được xem dữ liệu tiền. Hãy nhờ Admin cấp quyền view_transactions.",
		"filter":                       "Lọc",
		"apply":                        "Áp dụng",
		"reset":                        "Xóa lọc",
		"export_csv":                   "Xuất CSV",
		"bank_account":                 "Tài khoản ngân hàng",
		"any":                          "Tất cả",
		"account_number":               "Số tài khoản",
		"reference":                    "Mã tham chiếu",
		"from_date":                    "Từ ngày",
		"to_date":                      "Đến ngày",
		"amount_in":                    "Số tiền vào",
		"amount_out":                   "Số tiền ra",
		"per_page":                     "Mỗi trang",
		"date":                         "Ngày",
		"memo":                         "Nội dung",
		"code":                         "Mã thanh toán",
		"balance":                      "Số dư",
		"sub_account":                  "Tài khoản ảo",
		"none":                         "không có",
		"total":                        "tổng",
		"page":                         "Trang",
		"previous":                     "Trước",
		"next":                         "Sau",
		"no_rows":                      "Không có kết quả.",
		"transaction":                  "Giao dịch",
		"decisions":                    "Quyết định khớp",
		"outcome":                      "Kết quả",
		"rule":                         "Quy tắc",
		"order":                        "Đơn hàng",
		"why":                          "Lý do",
		"no_decision":                  "Không có quyết định khớp: nội dung không chứa mã thanh toán.",
		"search":                       "Tìm kiếm",
		"status":                       "Trạng thái",
		"customer":                     "Khách hàng",
		"amount":                       "Số tiền",
		"paid":                         "Đã trả",
		"created":                      "Tạo lúc",
		"description":                  "Mô tả",
		"payment_code":                 "Mã thanh toán",
		"timeline":                     "Diễn biến",
		"ev_created":                   "Tạo đơn hàng",
		"ev_captured":                  "Đã thanh toán",
		"ev_cancelled":                 "Đã hủy",
		"ev_voided":                    "Đã hủy giao dịch",
		"notifications":                "Thông báo",
		"event":                        "Sự kiện",
		"attempts":                     "Số lần gửi",
		"last_error":                   "Lỗi gần nhất",
		"no_notif":                     "Không có thông báo nào về đơn hàng này.",
		"void":                         "Hủy giao dịch",
		"cancel":                       "Hủy đơn hàng",
		"void_help":                    "Đơn hàng chuyển sang đã hủy và thông báo TRANSACTION_VOID được gửi.",
		"cancel_help":                  "Đơn hàng chưa thanh toán chuyển sang đã hủy. Không gửi thông báo.",
		"error":                        "Lỗi",
		"back_home":                    "Về trang tổng quan",
		"st_AUTHENTICATION_NOT_NEEDED": "Chờ thanh toán",
		"st_CAPTURED":                  "Đã thanh toán",
		"st_CANCELLED":                 "Đã hủy",
		"signed_in_as":                 "Đăng nhập với",
		// Settings, bank accounts, sandbox.
		"settings":         "Cài đặt",
		"bank_accounts":    "Tài khoản ngân hàng",
		"sandbox":          "Sandbox",
		"secret_once":      "Hãy sao chép ngay: khóa chỉ hiện lần này, không bao giờ hiện lại.",
		"ipn_secret":       "Khóa IPN mới (X-Secret-Key)",
		"merchant_secret":  "Khóa bí mật merchant mới",
		"formats":          "Định dạng mã thanh toán",
		"formats_test":     "Định dạng mã thanh toán dùng chung cho dữ liệu thật và thử nghiệm: hãy chuyển sang dữ liệu thật để sửa. Bạn vẫn có thể thử một nội dung.",
		"formats_saved":    "Đã lưu các định dạng.",
		"prefix":           "Tiền tố",
		"suffix_from":      "Hậu tố từ",
		"suffix_to":        "Hậu tố đến",
		"char_type":        "Ký tự",
		"active":           "Đang dùng",
		"formats_help":     "Điền dòng trống để thêm định dạng; xóa tiền tố và độ dài của một dòng để bỏ nó.",
		"try_memo":         "Thử một nội dung chuyển khoản",
		"try":              "Thử nội dung với các định dạng này",
		"save_formats":     "Lưu các định dạng",
		"normalized":       "Nội dung đã chuẩn hóa",
		"chosen":           "được chọn",
		"format_n":         "định dạng",
		"targets":          "Địa chỉ nhận thông báo",
		"test_sent":        "Thông báo thử đang được gửi: xem trong nhật ký gửi.",
		"kind":             "Loại",
		"auth_type":        "Xác thực",
		"secret":           "Khóa",
		"actions":          "Thao tác",
		"yes":              "có",
		"no":               "không",
		"send_test":        "Gửi thông báo thử",
		"rotate_secret":    "Đổi khóa",
		"no_targets":       "Chưa có địa chỉ nhận thông báo (PUT /v1/ipn, POST /v1/webhook).",
		"merchant":         "Thông tin merchant",
		"rotate_help":      "Khóa cũ hết hiệu lực ngay.",
		"no_merchant":      "Chưa có thông tin merchant (recon merchant credentials).",
		"users":            "Người dùng và vai trò",
		"role":             "Vai trò",
		"permissions":      "Quyền",
		"change_role":      "Thay đổi",
		"save":             "Lưu",
		"new_user":         "Người dùng mới",
		"create_user":      "Tạo người dùng",
		"holder":           "Chủ tài khoản",
		"last_tx":          "Giao dịch gần nhất",
		"link_status":      "Liên kết hub",
		"hub_company":      "công ty hub",
		"unlinked":         "không liên kết qua hub",
		"no_accounts":      "Chưa có tài khoản ngân hàng.",
		"gaps":             "Số dư không liên tục",
		"gap_before":       "thiếu giao dịch giữa giao dịch trước đó và",
		"expected":         "dự kiến",
		"reported":         "ngân hàng báo",
		"gap":              "chênh lệch",
		"no_gaps":          "Không có chỗ đứt: mọi số dư đều khớp với số dư trước.",
		"upload":           "Tải lên sao kê",
		"upload_failed":    "Không có dòng nào được nhập.",
		"bad_rows":         "Số dòng cần sửa",
		"imported":         "Đã nhập",
		"duplicates":       "Đã có",
		"statement_file":   "Tệp sao kê (CSV, camt.053, MT940)",
		"upload_help":      "Nhập tất cả hoặc không gì: tệp có dòng lỗi sẽ không được lưu và các dòng cần sửa được liệt kê.",
		"upload_button":    "Tải lên",
		"link_bank":        "Liên kết ngân hàng",
		"no_connector":     "Máy chủ này không kết nối với ngân hàng thật: ở chế độ thật không thể liên kết ngân hàng tại đây. Hãy chuyển sang dữ liệu thử nghiệm để liên kết ngân hàng sandbox.",
		"sb_intro":         "Chỉ dữ liệu thử nghiệm: đóng vai ngân hàng của khách, không có tiền thật nào được chuyển.",
		"sb_transfer":      "Giả lập chuyển khoản",
		"sb_send":          "Gửi chuyển khoản",
		"sb_pay":           "Thanh toán đơn hàng",
		"invoice":          "Số hóa đơn",
		"sb_pay_help":      "Chuyển khoản số tiền còn thiếu, với mã thanh toán của đơn hàng làm nội dung.",
		"sb_transfer_done": "Chuyển khoản đã đến:",
		"sb_event_done":    "Đã tạo sự kiện hub (sự kiện theo thời gian đến ở lần quét sau).",
		"duplicate":        "trùng lặp",
		"sb_hub":           "Tạo sự kiện hub",
		"sb_hub_help":      "Tạo qua đúng luồng của hub, như lệnh recon trigger.",
		"sb_fire":          "Tạo sự kiện",
		"sb_identities":    "Danh tính ngân hàng sandbox",
		"bank":             "Ngân hàng",
		"account_type":     "Loại",
		"national_id":      "CCCD",
		"phone":            "Điện thoại",
		"fails_with":       "Lỗi cố ý",
	},
}
