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

// Decimal writes f with one fraction digit and the language's decimal
// mark (a comma in Vietnamese), then unit: "73,6 ms", "98,5%".
func (l lang) Decimal(f float64, unit string) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if l == "vi" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s + unit
}

// Percent is Decimal of the share f (0 to 1) in percent.
func (l lang) Percent(f float64) string { return l.Decimal(f*100, "%") }

// Millis is Decimal of d in milliseconds.
func (l lang) Millis(d time.Duration) string {
	return l.Decimal(float64(d.Microseconds())/1000, " ms")
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
func (h *Handler) timeText(t time.Time) string { return localTime(t, h.Location, timeLayout) }

const timeLayout = "2006-01-02 15:04:05"

// messages holds every text of the pages, per language.
var messages = withPairs(map[lang]map[string]string{
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
		"no_money":                     "Your role does not show money data. Ask an Admin for the “View transactions” permission.",
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
		"exceptions":                   "Exceptions",
		"exception":                    "Exception",
		"back_exceptions":              "All exceptions",
		"x_open":                       "Open",
		"x_resolved":                   "Resolved",
		"x_kind":                       "Kind",
		"xk_unmatched":                 "Unmatched",
		"xk_underpaid":                 "Underpaid",
		"xk_overpaid":                  "Overpaid",
		"xk_duplicate":                 "Duplicate",
		"xk_va_inactive":               "Inactive virtual account",
		"x_resolution":                 "Resolution",
		"x_action":                     "Action",
		"xa_match":                     "Matched to an order",
		"xa_refund":                    "Refunded outside Recon",
		"xa_ignore":                    "Ignored",
		"x_who":                        "By",
		"x_when":                       "At",
		"x_note":                       "Note (why)",
		"x_note_help":                  "Required: say why. At most 500 bytes.",
		"x_before":                     "Before",
		"x_result":                     "Result",
		"x_history":                    "Decision history",
		"x_open_tx":                    "Open the transaction",
		"x_suggestions":                "Suggested orders",
		"x_why_suggested":              "Why suggested",
		"sg_same_amount":               "its outstanding amount is this transfer's",
		"sg_similar_code":              "its payment code is close to the memo's",
		"sg_same_customer":             "same customer as the order the memo named",
		"x_no_suggestion":              "No open order looks like the one this transfer was meant for.",
		"x_resolve":                    "Resolve",
		"x_match_to":                   "Match to order",
		"x_match_invoice":              "Match to the order with invoice number:",
		"x_invoice":                    "Invoice number",
		"newest":                       "Newest",
		"delivery":                     "Notification",
		"back_notifications":           "All notifications",
		"n_figures":                    "Figures per kind",
		"n_since":                      "since",
		"n_kind":                       "Kind",
		"nk_ipn":                       "Payment IPN",
		"nk_webhook":                   "Hub event",
		"nk_hub_ipn":                   "Balance change",
		"n_success":                    "Success rate",
		"n_failing":                    "Failing",
		"ds_pending":                   "Pending",
		"ds_delivered":                 "Delivered",
		"ds_dead":                      "Dead",
		"n_none":                       "No notification in this period.",
		"n_replay_failed":              "Replay failed notifications",
		"n_failed_since":               "Created since",
		"n_replayed":                   "Notifications queued again",
		"n_replayed_one":               "The notification is queued and will be sent again at once.",
		"n_next":                       "Next attempt",
		"n_replay":                     "Replay",
		"n_replay_help":                "Sends the same payload again, whatever its state.",
		"n_payload":                    "Payload",
		"n_at":                         "At",
		"n_latency":                    "Latency",
		"n_response":                   "Response",
		"n_no_attempt":                 "No attempt yet.",
		"n_curl":                       "Copy as cURL",
		"n_curl_signed":                "Signed now with the target's signing secret: receivers accept it for a few minutes. The X-Secret-Key value is not shown: put the target's secret there.",
		"n_curl_unsigned":              "The signature and secrets are placeholders: only an Admin's page shows a signed command.",
		"n_no_target":                  "No target is set for this kind of notification.",
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
		"no_targets":       "No notification address is set yet.",
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
		"rate_limited":     "Too many requests from this session or address.",
		"retry_after":      "Seconds to wait before trying again:",
		"upload_busy":      "The server is busy importing other statements, so nothing was imported: try again in a moment.",
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
		"no_money":                     "Vai trò của bạn không được xem dữ liệu tiền. Hãy nhờ Quản trị viên cấp quyền “Xem giao dịch”.",
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
		"exceptions":                   "Ngoại lệ",
		"exception":                    "Ngoại lệ",
		"back_exceptions":              "Tất cả ngoại lệ",
		"x_open":                       "Đang mở",
		"x_resolved":                   "Đã xử lý",
		"x_kind":                       "Loại",
		"xk_unmatched":                 "Không khớp",
		"xk_underpaid":                 "Trả thiếu",
		"xk_overpaid":                  "Trả thừa",
		"xk_duplicate":                 "Trùng lặp",
		"xk_va_inactive":               "Tài khoản ảo không còn hiệu lực",
		"x_resolution":                 "Cách xử lý",
		"x_action":                     "Hành động",
		"xa_match":                     "Khớp với đơn hàng",
		"xa_refund":                    "Đã hoàn tiền ngoài Recon",
		"xa_ignore":                    "Bỏ qua",
		"x_who":                        "Người xử lý",
		"x_when":                       "Lúc",
		"x_note":                       "Ghi chú (lý do)",
		"x_note_help":                  "Bắt buộc: ghi rõ lý do. Tối đa 500 byte.",
		"x_before":                     "Trước đó",
		"x_result":                     "Kết quả",
		"x_history":                    "Lịch sử quyết định",
		"x_open_tx":                    "Mở giao dịch",
		"x_suggestions":                "Đơn hàng gợi ý",
		"x_why_suggested":              "Lý do gợi ý",
		"sg_same_amount":               "số tiền còn thiếu bằng số tiền chuyển",
		"sg_similar_code":              "mã thanh toán gần giống mã trong nội dung",
		"sg_same_customer":             "cùng khách hàng với đơn hàng được ghi trong nội dung",
		"x_no_suggestion":              "Không có đơn hàng đang mở nào giống với giao dịch này.",
		"x_resolve":                    "Xử lý",
		"x_match_to":                   "Khớp với đơn hàng",
		"x_match_invoice":              "Khớp với đơn hàng có mã hóa đơn:",
		"x_invoice":                    "Mã hóa đơn",
		"newest":                       "Mới nhất",
		"delivery":                     "Thông báo",
		"back_notifications":           "Tất cả thông báo",
		"n_figures":                    "Số liệu theo loại",
		"n_since":                      "từ",
		"n_kind":                       "Loại",
		"nk_ipn":                       "IPN thanh toán",
		"nk_webhook":                   "Sự kiện hub",
		"nk_hub_ipn":                   "Biến động số dư",
		"n_success":                    "Tỷ lệ thành công",
		"n_failing":                    "Đang lỗi",
		"ds_pending":                   "Đang chờ",
		"ds_delivered":                 "Đã gửi",
		"ds_dead":                      "Đã dừng gửi",
		"n_none":                       "Không có thông báo nào trong khoảng này.",
		"n_replay_failed":              "Gửi lại các thông báo lỗi",
		"n_failed_since":               "Tạo từ lúc",
		"n_replayed":                   "Số thông báo được xếp gửi lại",
		"n_replayed_one":               "Thông báo đã được xếp hàng và sẽ được gửi lại ngay.",
		"n_next":                       "Lần gửi tiếp theo",
		"n_replay":                     "Gửi lại",
		"n_replay_help":                "Gửi lại đúng nội dung này, dù trạng thái là gì.",
		"n_payload":                    "Nội dung",
		"n_at":                         "Lúc",
		"n_latency":                    "Độ trễ",
		"n_response":                   "Phản hồi",
		"n_no_attempt":                 "Chưa gửi lần nào.",
		"n_curl":                       "Sao chép dạng cURL",
		"n_curl_signed":                "Đã ký lúc mở trang bằng khóa ký của đích nhận: bên nhận chấp nhận trong vài phút. Giá trị X-Secret-Key không được hiển thị: hãy điền khóa bí mật của đích nhận.",
		"n_curl_unsigned":              "Chữ ký và các khóa bí mật chỉ là chỗ trống: chỉ trang của Admin mới có lệnh đã ký.",
		"n_no_target":                  "Chưa cài đặt đích nhận cho loại thông báo này.",
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
		"no_targets":       "Chưa có địa chỉ nhận thông báo.",
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
		"rate_limited":     "Phiên đăng nhập hoặc địa chỉ này gửi quá nhiều yêu cầu.",
		"retry_after":      "Số giây cần chờ trước khi thử lại:",
		"upload_busy":      "Máy chủ đang bận nhập các sao kê khác nên chưa có dòng nào được nhập: vui lòng thử lại sau giây lát.",
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
}, opsMessages)

// withPairs adds messages written side by side, English then Vietnamese.
func withPairs(m map[lang]map[string]string, pairs map[string][2]string) map[lang]map[string]string {
	for k, p := range pairs {
		m["en"][k], m["vi"][k] = p[0], p[1]
	}
	return m
}

// opsMessages are the operations screens' (orders, exceptions,
// notifications, home) later messages: the confirmation steps, the open
// exceptions count, the failing filter and the list's suggestions.
var opsMessages = map[string][2]string{
	"c_back":                {"Go back: do nothing", "Quay lại: không làm gì"},
	"c_void":                {"Void the payment?", "Hủy giao dịch thanh toán?"},
	"c_void_intro":          {"The order's payment will be voided for good and the merchant notified.", "Thanh toán của đơn hàng sẽ bị hủy vĩnh viễn và người bán được thông báo."},
	"c_cancel":              {"Cancel the order?", "Hủy đơn hàng?"},
	"c_cancel_intro":        {"The order will be cancelled for good: a later transfer for it will not pay it.", "Đơn hàng sẽ bị hủy vĩnh viễn: chuyển khoản sau đó sẽ không thanh toán được đơn."},
	"c_resolve":             {"Resolve this exception?", "Xử lý ngoại lệ này?"},
	"c_resolve_intro":       {"This resolution is final and recorded with your name.", "Cách xử lý này là cuối cùng và được ghi lại kèm tên của bạn."},
	"c_replay":              {"Send this notification again?", "Gửi lại thông báo này?"},
	"c_replay_intro":        {"The notification will be sent again at once, with the same delivery id.", "Thông báo sẽ được gửi lại ngay, với cùng mã gửi."},
	"c_replay_failed":       {"Send the failed notifications again?", "Gửi lại các thông báo lỗi?"},
	"c_replay_failed_intro": {"Every failed notification (dead, or waiting for a retry) created since the time will be sent again at once.", "Mọi thông báo lỗi (đã ngừng, hoặc đang chờ thử lại) tạo từ thời điểm này sẽ được gửi lại ngay."},
	"c_status_after":        {"Status afterwards", "Trạng thái sau đó"},
	"c_paid_after":          {"Paid afterwards", "Đã trả sau đó"},
	"c_notification":        {"Notification sent", "Thông báo được gửi"},
	"c_none_sent":           {"none", "không có"},
	"c_no_target":           {"none: no active target URL of this kind is set", "không có: chưa đặt URL nhận loại thông báo này"},
	"c_listen":              {"held for recon listen (test mode, no active target)", "giữ cho recon listen (chế độ thử nghiệm, không có đích đang hoạt động)"},
	"c_count":               {"Notifications now", "Số thông báo hiện tại"},
	"c_not_captured":        {"Only a paid order can be voided.", "Chỉ đơn hàng đã thanh toán mới có thể hủy giao dịch."},
	"c_not_open":            {"Only an order awaiting payment can be cancelled.", "Chỉ đơn hàng đang chờ thanh toán mới có thể hủy."},
	"n_delivery":            {"Notification", "Thông báo"},
	"ds_failing":            {"Failing", "Đang lỗi"},
	"h_open_exceptions":     {"Open exceptions", "Ngoại lệ đang mở"},
	"x_suggested":           {"Suggested orders", "Đơn hàng gợi ý"},
	"n_newest_only":         {"the newest 2,000 notifications only", "chỉ 2.000 thông báo mới nhất"},
}

// Texts added by part, both languages side by side (kept together to ease
// merging); added to messages when the package loads: the transactions
// screen's search (code, matched state, memo), the settings' OAuth clients
// and hub webhook, the statement upload's size and progress.
var partMessages = []struct{ key, en, vi string }{
	{"matched_state", "Matched state", "Trạng thái đối soát"},
	{"state_matched", "Matched", "Đã khớp"},
	{"state_unmatched", "Unmatched", "Chưa khớp"},
	{"state_exception", "Open exception", "Ngoại lệ đang mở"},
	{"state_help", "Matched: paid an order. Unmatched: money in that paid none.", "Đã khớp: đã thanh toán một đơn hàng. Chưa khớp: tiền vào không thanh toán đơn nào."},
	{"memo_search", "Memo contains", "Nội dung chứa"},
	{"memo_search_help", "Accents and case are ignored.", "Không phân biệt dấu và chữ hoa."},
	{"search_found", "found on this page (no total: the code, memo and matched filters are checked on the transfers read, newest first)", "tìm thấy ở trang này (không có tổng: mã, nội dung và trạng thái được kiểm tra trên các giao dịch đã đọc, mới nhất trước)"},
	{"search_read", "Searched %s", "Đã tìm trong %s"},
	{"search_read_to", "back to %s.", "đến %s."},
	{"search_more", "Older transfers are not searched yet: Next continues with them.", "Các giao dịch cũ hơn chưa được tìm: bấm Sau để tìm tiếp."},
	{"search_all", "Nothing older is left to search.", "Không còn giao dịch cũ hơn để tìm."},
	{"ipn_target", "IPN target", "Địa chỉ nhận IPN"},
	{"ipn_saved", "The IPN target is saved: it applies to the next notifications.", "Đã lưu địa chỉ nhận IPN: áp dụng cho các thông báo tiếp theo."},
	{"ipn_help", "The address must be public HTTPS, never an internal one. With a secret key, the current key is kept, or a new one is made and shown once.", "Địa chỉ phải là HTTPS công khai, không dùng địa chỉ nội bộ. Với khóa bí mật, khóa hiện tại được giữ nguyên, hoặc tạo khóa mới và chỉ hiện một lần."},
	{"oauth_clients", "OAuth clients", "Ứng dụng OAuth"},
	{"name", "Name", "Tên"},
	{"scopes", "Scopes", "Phạm vi (scope)"},
	{"client_kind", "Kind", "Loại"},
	{"confidential_client", "confidential (secret)", "bảo mật (có khóa bí mật)"},
	{"public_client", "public: PKCE, no secret", "công khai: PKCE, không có khóa"},
	{"revoke", "Revoke", "Thu hồi"},
	{"revoke_help", "Revoking deletes the client and every token issued to it: they stop working at once.", "Thu hồi sẽ xóa ứng dụng và mọi token đã cấp cho nó: các token hết hiệu lực ngay."},
	{"no_clients", "No OAuth client in this mode yet.", "Chưa có ứng dụng OAuth nào ở chế độ này."},
	{"client_revoked", "The client is revoked: its tokens no longer work.", "Đã thu hồi ứng dụng: các token của nó không còn dùng được."},
	{"new_client", "New OAuth client", "Ứng dụng OAuth mới"},
	{"redirect_uris", "Redirect URIs (one a line)", "Redirect URI (mỗi dòng một địa chỉ)"},
	{"public_help", "Public client (browser or mobile app: no secret, authorization code with PKCE only)", "Ứng dụng công khai (trình duyệt hoặc ứng dụng di động: không có khóa, chỉ authorization code với PKCE)"},
	{"create_client", "Create the client", "Tạo ứng dụng"},
	{"client_secret", "New client secret", "Khóa bí mật mới của ứng dụng"},
	{"client_created", "Client created", "Đã tạo ứng dụng"},
	{"hub_webhook", "Hub webhook (bank linking)", "Webhook của hub (liên kết ngân hàng)"},
	{"no_webhook", "No hub webhook yet: saving the form makes one, with a new secret shown once.", "Chưa có webhook của hub: lưu biểu mẫu sẽ tạo webhook với khóa mới, chỉ hiện một lần."},
	{"webhook_saved", "The webhook is saved: it applies to the next events.", "Đã lưu webhook: áp dụng cho các sự kiện tiếp theo."},
	{"webhook_secret", "New webhook secret", "Khóa bí mật mới của webhook"},
	{"all_events", "all events (*)", "mọi sự kiện (*)"},
	{"events_help", "No event checked: the webhook receives none. The address must be public HTTPS, never an internal one.", "Không chọn sự kiện nào: webhook không nhận sự kiện nào. Địa chỉ phải là HTTPS công khai, không dùng địa chỉ nội bộ."},
	{"upload_limit", "Largest file:", "Tệp lớn nhất:"},
	{"too_large", "The statement file is larger than the limit of", "Tệp sao kê lớn hơn giới hạn"},
	{"uploading", "Uploading…", "Đang tải lên…"},
	{"upload_progress", "Upload progress", "Tiến độ tải lên"},
	{"importing", "Uploaded: importing…", "Đã tải lên: đang nhập…"},
	{"upload_network", "The upload was interrupted: nothing was imported. Try again.", "Tải lên bị gián đoạn: không có dòng nào được nhập. Hãy thử lại."},
}

func init() {
	for _, m := range partMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
