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
		"x_attention":                  "Exceptions to resolve",
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
		"x_attention":                  "Ngoại lệ cần xử lý",
	},
}
