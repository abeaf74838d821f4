package dashboard

import (
	"fmt"
	"html/template"
	"strings"

	"recon"
)

// The messages of the sentences the domain writes in English and the
// dashboard writes in the reader's language (docs/dashboard.md, Language):
// match decisions' and exceptions' reasons (recon.MatchReason), the memo
// tester's explanation (recon.CodeExplanation), statuses and outcomes.
var langMessages = []struct{ key, en, vi string }{
	// How a transfer names its order (recon.ReasonBy…).
	{"mr_by_code", "payment code %s", "mã thanh toán %s"},
	{"mr_by_va", "virtual account %s", "tài khoản ảo %s"},
	{"mr_by_memo", "memo code %s", "mã nội dung %s"},
	{"mr_by_hand", "a match by hand", "khớp thủ công"},
	// recon.Reason… kinds: %[1]s how, %[2]s the order, %[3]s paid, %[4]s the
	// order's amount, %[5]s the difference (or the state).
	{"mr_paid", "%[1]s names order %[2]s: %[3]s of %[4]s paid", "%[1]s ứng với đơn hàng %[2]s: đã trả %[3]s trên %[4]s"},
	{"mr_short", "%[1]s names order %[2]s: %[3]s of %[4]s paid, %[5]s short", "%[1]s ứng với đơn hàng %[2]s: đã trả %[3]s trên %[4]s, còn thiếu %[5]s"},
	{"mr_over", "%[1]s names order %[2]s: %[3]s paid for %[4]s, %[5]s over", "%[1]s ứng với đơn hàng %[2]s: đã trả %[3]s cho %[4]s, thừa %[5]s"},
	{"mr_already", "%[1]s names order %[2]s, which is already %[3]s", "%[1]s ứng với đơn hàng %[2]s, đơn này đã %[3]s"},
	{"mr_va_inactive", "%[1]s of order %[2]s is %[3]s: nothing was applied", "%[1]s của đơn hàng %[2]s đã %[3]s: không ghi nhận khoản nào"},
	{"mr_no_order_code", "no order with payment code %s", "không có đơn hàng nào mang mã thanh toán %s"},
	{"mr_no_order_va", "no order with virtual account %s", "không có đơn hàng nào mang tài khoản ảo %s"},
	{"mr_no_code", "no payment code or virtual account: a credit to an account that receives order payments",
		"không có mã thanh toán hay tài khoản ảo: tiền vào một tài khoản nhận thanh toán đơn hàng"},
	{"mr_refund_twice", "refund %[1]s was already settled by transaction %[2]d: this second transfer of %[3]s went out too",
		"khoản hoàn tiền %[1]s đã được tất toán bởi giao dịch %[2]d: lần chuyển thứ hai %[3]s này cũng đã đi"},
	{"mr_refund_waiting", "refund %[1]s still waits for approval, yet %[2]s went out with its reference",
		"khoản hoàn tiền %[1]s vẫn chờ duyệt, nhưng %[2]s đã được chuyển đi kèm mã tham chiếu của nó"},
	{"mr_refund_state", "refund %[1]s is %[2]s, yet %[3]s went out with its reference",
		"khoản hoàn tiền %[1]s ở trạng thái “%[2]s”, nhưng %[3]s đã được chuyển đi kèm mã tham chiếu của nó"},
	{"mr_refund_amount", "refund %[1]s is %[2]s, but the transfer with its reference sent %[3]s",
		"khoản hoàn tiền %[1]s là %[2]s, nhưng giao dịch kèm mã tham chiếu của nó đã chuyển %[3]s"},
	{"mr_refund_account", "refund %[1]s leaves from bank account %[2]d, but the transfer with its reference left bank account %[3]d",
		"khoản hoàn tiền %[1]s chuyển từ tài khoản ngân hàng %[2]d, nhưng giao dịch kèm mã tham chiếu của nó đi từ tài khoản %[3]d"},
	// The states a reason names (an order's, a virtual account's).
	{"mr_state_captured", "paid", "được thanh toán"},
	{"mr_state_cancelled", "cancelled", "bị hủy"},
	{"mr_state_expired", "expired", "hết hạn"},
	{"mr_state_paid", "paid", "được thanh toán"},
	// Match outcomes (recon.Match…), as a decision's badge.
	{"mo_matched", "Matched", "Đã khớp"},
	{"mo_underpaid", "Underpaid", "Trả thiếu"},
	{"mo_overpaid", "Overpaid", "Trả thừa"},
	{"mo_duplicate", "Duplicate", "Trùng lặp"},
	{"mo_unmatched", "Unmatched", "Không khớp"},
	{"mo_partial", "Partly paid", "Trả một phần"},
	{"mo_va_inactive", "Inactive virtual account", "Tài khoản ảo hết hiệu lực"},
	// Match rules (recon.MatchBy…): how the order was found.
	{"mrule_code", "payment code", "mã thanh toán"},
	{"mrule_sub_account", "virtual account", "tài khoản ảo"},
	{"mrule_manual", "by hand", "thủ công"},
	{"mrule_va", "virtual account (API v2)", "tài khoản ảo (API v2)"},
	// Labels that were API field names (settings.html).
	{"ct_NumberOnly", "Digits only", "Chỉ chữ số"},
	{"ct_NumberAndLetter", "Digits and letters", "Chữ số và chữ cái"},
	{"tk_ipn", "Payment notifications (IPN)", "Thông báo thanh toán (IPN)"},
	{"tk_webhook", "Bank-linking webhook", "Webhook liên kết ngân hàng"},
	{"tk_hub_ipn", "Balance-change notifications", "Thông báo biến động số dư"},
	{"ipn_url", "Address that receives the notifications", "Địa chỉ nhận thông báo"},
	{"webhook_url", "Address that receives the events", "Địa chỉ nhận sự kiện"},
	{"wh_events", "Events sent", "Sự kiện được gửi"},
	{"au_SECRET_KEY", "Secret key in a header", "Khóa bí mật trong header"},
	{"au_NONE", "None (signature only)", "Không (chỉ có chữ ký)"},
	{"client_id", "Client ID", "Mã ứng dụng"},
	{"role_SuperAdmin", "Super admin", "Quản trị hệ thống"},
	{"role_Admin", "Admin", "Quản trị viên"},
	{"role_Accountant", "Accountant", "Kế toán"},
	{"role_Member", "Member", "Thành viên"},
	{"perm_view_transactions", "View transactions", "Xem giao dịch"},
	{"perm_create_transactions", "Create transactions", "Tạo giao dịch"},
	{"perm_create_refunds", "Request refunds", "Yêu cầu hoàn tiền"},
	{"perm_issue_invoices", "Issue e-invoices", "Phát hành hóa đơn điện tử"},
	{"scope_company", "Company profile", "Thông tin công ty"},
	{"scope_transaction:read", "Read transactions", "Đọc giao dịch"},
	{"scope_transaction:write", "Add transactions", "Thêm giao dịch"},
	{"scope_bank-account:read", "Read bank accounts", "Đọc tài khoản ngân hàng"},
	{"scope_webhook:read", "Read notification settings", "Đọc cài đặt thông báo"},
	{"scope_webhook:write", "Change notification settings", "Sửa cài đặt thông báo"},
	{"scope_profile", "User profile", "Hồ sơ người dùng"},
	{"scope_delivery:read", "Read notifications sent", "Đọc thông báo đã gửi"},
	{"scope_delivery:write", "Resend notifications", "Gửi lại thông báo"},
	{"scope_offline_access", "Stay signed in (refresh token)", "Duy trì đăng nhập (refresh token)"},
	{"scope_hub", "Bank linking", "Liên kết ngân hàng"},
	{"scope_exception:write", "Resolve exceptions", "Xử lý ngoại lệ"},
	{"scope_order:read", "Read orders", "Đọc đơn hàng"},
	{"scope_order:write", "Create and cancel orders", "Tạo và hủy đơn hàng"},
	{"scope_refund:read", "Read refunds", "Đọc hoàn tiền"},
	{"scope_refund:write", "Request refunds", "Yêu cầu hoàn tiền"},
	{"scope_invoice:read", "Read e-invoices", "Đọc hóa đơn điện tử"},
	{"scope_invoice:write", "Issue e-invoices", "Phát hành hóa đơn điện tử"},
	// The memo tester (recon.CodeExplanation).
	{"mt_digits", "digits", "chữ số"},
	{"mt_letters", "digits or letters", "chữ số hoặc chữ cái"},
	{"mt_in_word", "%[1]s is inside a word (after “%[2]s”): a code starts a word", "%[1]s nằm giữa một từ (sau “%[2]s”): mã phải đứng đầu một từ"},
	{"mt_short", "%[1]s has %[2]d %[3]s after %[4]s; format %[5]d needs %[6]d to %[7]d", "%[1]s có %[2]d %[3]s sau %[4]s; định dạng %[5]d cần từ %[6]d đến %[7]d"},
	{"mt_long", "%[1]s has %[2]d %[3]s after %[4]s, more than the %[6]d of format %[5]d: a longer run is not a code",
		"%[1]s có %[2]d %[3]s sau %[4]s, nhiều hơn %[6]d của định dạng %[5]d: chuỗi dài hơn không phải là mã"},
	{"mt_later", "%[1]s is a code of format %[2]d too, but %[3]s comes first (the leftmost code wins, then the longest prefix)",
		"%[1]s cũng là mã của định dạng %[2]d, nhưng %[3]s đứng trước (mã bên trái nhất được chọn, rồi đến tiền tố dài nhất)"},
	{"mt_match", "%[1]s: prefix %[2]s at a word start and %[3]d %[4]s (format %[5]d: %[6]d to %[7]d)",
		"%[1]s: tiền tố %[2]s ở đầu một từ và %[3]d %[4]s (định dạng %[5]d: từ %[6]d đến %[7]d)"},
	{"mt_found", "Found %s", "Tìm thấy %s"},
	{"mt_none", "No payment code: %s", "Không có mã thanh toán: %s"},
	{"mt_no_prefix", "No payment code: no active format's prefix appears in the memo", "Không có mã thanh toán: nội dung không chứa tiền tố của định dạng nào đang dùng"},
	{"mt_inactive", "format %d (%s) is inactive", "định dạng %d (%s) đang tắt"},
	{"mt_unusable", "format %d (%s) cannot match anything (its prefix, lengths or character type)", "định dạng %d (%s) không thể khớp mã nào (xem tiền tố, độ dài hoặc loại ký tự)"},
	// The lists' filters refused (recon.ParseTransactionFilter and its
	// kin): %[1]s the field, by its label (fl_*) when it has one.
	{"q_int", "%[1]s must be a whole number from %[2]s to %[3]s.", "%[1]s phải là số nguyên từ %[2]s đến %[3]s."},
	{"q_amount", "%[1]s must be an amount of whole đồng, not negative.", "%[1]s phải là số tiền nguyên (đồng), không âm."},
	{"q_length", "%[1]s must be 1 to %[2]s characters.", "%[1]s phải dài từ 1 đến %[2]s ký tự."},
	{"q_unknown", "The address holds a filter this page does not know: %[1]s.", "Địa chỉ có một bộ lọc trang này không nhận: %[1]s."},
	{"q_repeated", "The filter %[1]s is given more than once.", "Bộ lọc %[1]s được đưa nhiều lần."},
	{"q_date", "%[1]s must be a date (YYYY-MM-DD).", "%[1]s phải là một ngày (YYYY-MM-DD)."},
	{"q_date_order", "The start date must not be after the end date.", "Từ ngày không được sau Đến ngày."},
	{"q_code", "The payment code must be 1 to 64 letters and digits, such as DH12345.", "Mã thanh toán phải gồm 1 đến 64 chữ cái và chữ số, ví dụ DH12345."},
	{"q_choice", "Choose %[1]s from the list.", "Hãy chọn %[1]s trong danh sách."},
	{"fl_from_date", "From date", "Từ ngày"},
	{"fl_to_date", "To date", "Đến ngày"},
	{"fl_amount_in", "Money in", "Số tiền vào"},
	{"fl_amount_out", "Money out", "Số tiền ra"},
	{"fl_bank_account_id", "Bank account", "Tài khoản ngân hàng"},
	{"fl_page", "Page", "Trang"},
	{"fl_limit", "Rows per page", "Số dòng mỗi trang"},
	{"fl_account_number", "Account number", "Số tài khoản"},
	{"fl_reference_number", "Reference", "Mã tham chiếu"},
	{"fl_matched", "Match state", "Trạng thái khớp"},
	{"fl_direction", "Direction", "Chiều tiền"},
	{"fl_memo", "Memo", "Nội dung"},
	{"fl_before", "Page", "Trang"},
	// Account types of the sandbox banks' identities (recon.Account…).
	{"at_individual", "Individual", "Cá nhân"},
	{"at_enterprise", "Business", "Doanh nghiệp"},
	// Errors with their message as data (recon.Say): the statement
	// upload's (statement.*) and the roles' refusals (recon.Caller.Authorize).
	{"st_row", "Row %d: ", "Dòng %d: "},
	{"st_utf16", "The file is UTF-16 text: save it as CSV UTF-8.", "Tệp được lưu dạng văn bản UTF-16: hãy lưu lại dưới dạng CSV UTF-8."},
	{"st_no_header", "The file is empty: a header row is required.", "Tệp trống: cần có một dòng tiêu đề."},
	{"st_empty", "The file is empty.", "Tệp trống."},
	{"st_csv_line", "Line %[1]s of the CSV file is malformed (quotes or separators).", "Dòng %[1]s của tệp CSV sai định dạng (dấu ngoặc kép hoặc dấu phân cách)."},
	{"st_unknown_column", "Unknown column %[1]s. The known columns are %[2]s.", "Không nhận ra cột %[1]s. Các cột được nhận là %[2]s."},
	{"st_repeated_column", "Column %[1]s appears more than once.", "Cột %[1]s xuất hiện nhiều lần."},
	{"st_missing_column", "Missing column %[1]s. The known columns are %[2]s.", "Thiếu cột %[1]s. Các cột được nhận là %[2]s."},
	{"st_both_amount_columns", "The file has both a signed amount column and money-in/money-out columns: use one or the other.",
		"Tệp có cả cột số tiền có dấu lẫn cột tiền vào/tiền ra: chỉ dùng một loại."},
	{"st_other_account", "The statement is for account %[1]s, not %[2]s.", "Sao kê này của tài khoản %[1]s, không phải %[2]s."},
	{"st_two_accounts", "The file holds statements of two accounts, %[1]s and %[2]s: import one account per file.",
		"Tệp chứa sao kê của hai tài khoản, %[1]s và %[2]s: mỗi tệp chỉ nhập một tài khoản."},
	{"st_row_malformed", "the row is malformed (its cells do not match the header row).", "dòng sai định dạng (các ô không khớp dòng tiêu đề)."},
	{"st_row_nameless", "column %[1]s has a value but no name in the header row.", "cột %[1]s có giá trị nhưng không có tên ở dòng tiêu đề."},
	{"st_row_date", "column %[1]s is not a date: write YYYY-MM-DD or DD/MM/YYYY, with the time if any.", "cột %[1]s không phải là ngày: hãy ghi YYYY-MM-DD hoặc DD/MM/YYYY, kèm giờ nếu có."},
	{"st_row_amount", "column %[1]s is not an amount of whole đồng.", "cột %[1]s không phải là số tiền (đồng, không có phần lẻ)."},
	{"st_row_empty", "column %[1]s is empty.", "cột %[1]s để trống."},
	{"st_row_zero", "column %[1]s is zero.", "cột %[1]s bằng 0."},
	{"st_row_both_amounts", "both money in and money out are set: a row is one or the other.", "có cả tiền vào lẫn tiền ra: mỗi dòng chỉ là một trong hai."},
	{"st_row_no_amount", "no amount: money in and money out are empty or zero.", "không có số tiền: tiền vào và tiền ra đều trống hoặc bằng 0."},
	{"st_row_no_reference", "column %[1]s is empty: every row needs the bank's reference.", "cột %[1]s để trống: mỗi dòng cần số tham chiếu của ngân hàng."},
	{"st_row_utf8", "column %[1]s is not valid UTF-8: save the file as CSV UTF-8.", "cột %[1]s không phải UTF-8 hợp lệ: hãy lưu tệp dưới dạng CSV UTF-8."},
	{"forbidden_permission", "Your role (%[1]s) does not allow this: it needs an Admin, or the “%[2]s” permission.",
		"Vai trò của bạn (%[1]s) không được làm việc này: cần Quản trị viên, hoặc quyền “%[2]s”."},
	{"forbidden_accountant", "Your role (%[1]s) does not allow this: it needs an Admin or an Accountant.",
		"Vai trò của bạn (%[1]s) không được làm việc này: cần Quản trị viên hoặc Kế toán."},
	{"not_found", "Not found: this page or record does not exist, or belongs to another company or mode.",
		"Không tìm thấy: trang hoặc dữ liệu này không tồn tại, hoặc thuộc công ty hay chế độ khác."},
	{"forbidden_admin", "Your role (%[1]s) does not allow this: it needs an Admin.", "Vai trò của bạn (%[1]s) không được làm việc này: cần Quản trị viên."},
}

func init() {
	for _, m := range langMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}

// Reason writes a recorded reason sentence (a match decision's, an
// exception's) in the language, from its data (recon.ParseReason), amounts
// as money; a sentence it does not know is shown as it is.
func (l lang) Reason(s string) string {
	if id, byRef, ok := recon.ParseDupReason(s); ok {
		if byRef {
			return fmt.Sprintf(l.T("mr_dup_ref"), id)
		}
		return fmt.Sprintf(l.T("mr_dup_memo"), id)
	}
	r, ok := recon.ParseReason(s)
	if !ok {
		return s
	}
	var how string
	switch r.By {
	case recon.ReasonByCode:
		how = fmt.Sprintf(l.T("mr_by_code"), r.Ref)
	case recon.ReasonByVA:
		how = fmt.Sprintf(l.T("mr_by_va"), r.Ref)
	case recon.ReasonByMemo:
		how = fmt.Sprintf(l.T("mr_by_memo"), r.Ref)
	default:
		how = l.T("mr_by_hand")
	}
	var out string
	switch r.Kind {
	case recon.ReasonPaid, recon.ReasonShort, recon.ReasonOver:
		out = fmt.Sprintf(l.T("mr_"+r.Kind), how, r.Order, l.Money(r.Paid), l.Money(r.Amount), l.Money(r.Diff))
		if r.Kind == recon.ReasonPaid { // two amounts: no %[5]s to fill
			out = fmt.Sprintf(l.T("mr_paid"), how, r.Order, l.Money(r.Paid), l.Money(r.Amount))
		}
	case recon.ReasonAlready, recon.ReasonVAInactive:
		state := r.State
		if _, ok := messages[l]["mr_state_"+state]; ok {
			state = l.T("mr_state_" + state)
		}
		out = fmt.Sprintf(l.T("mr_"+r.Kind), how, r.Order, state)
	case recon.ReasonNoOrderCode, recon.ReasonNoOrderVA:
		out = fmt.Sprintf(l.T("mr_"+r.Kind), r.Ref)
	case recon.ReasonNoCode:
		out = l.T("mr_no_code")
	case recon.ReasonRefundTwice:
		out = fmt.Sprintf(l.T("mr_refund_twice"), r.Ref, r.Other, l.Money(r.Paid))
	case recon.ReasonRefundWaiting:
		out = fmt.Sprintf(l.T("mr_refund_waiting"), r.Ref, l.Money(r.Paid))
	case recon.ReasonRefundState:
		state := r.State
		if _, ok := messages[l]["rs_"+state]; ok { // the refund's status (i18n_refunds.go)
			state = l.T("rs_" + state)
		}
		out = fmt.Sprintf(l.T("mr_refund_state"), r.Ref, state, l.Money(r.Paid))
	case recon.ReasonRefundAmount:
		out = fmt.Sprintf(l.T("mr_refund_amount"), r.Ref, l.Money(r.Amount), l.Money(r.Paid))
	case recon.ReasonRefundAccount:
		out = fmt.Sprintf(l.T("mr_refund_account"), r.Ref, r.Amount, r.Other)
	default:
		return s
	}
	return out
}

// Candidate writes what the memo tester says of a candidate in the language.
func (l lang) Candidate(c recon.CodeCandidate) string {
	kind := l.T("mt_digits")
	if c.Letters {
		kind = l.T("mt_letters")
	}
	switch c.Why {
	case recon.CandidateInWord:
		return fmt.Sprintf(l.T("mt_in_word"), c.Prefix, c.After)
	case recon.CandidateShort, recon.CandidateLong:
		return fmt.Sprintf(l.T("mt_"+c.Why), c.Text, c.Count, kind, c.Prefix, c.Format, c.From, c.To)
	case recon.CandidateLater:
		return fmt.Sprintf(l.T("mt_later"), c.Text, c.Format, c.First)
	case recon.CandidateMatch:
		return fmt.Sprintf(l.T("mt_match"), c.Text, c.Prefix, c.Count, kind, c.Format, c.From, c.To)
	}
	return c.Reason
}

// MemoSummary is the memo tester's explanation in one sentence, in the
// language (recon.CodeExplanation.Summary in English).
func (l lang) MemoSummary(e *recon.CodeExplanation) string {
	for _, c := range e.Candidates {
		if c.Match {
			return fmt.Sprintf(l.T("mt_found"), l.Candidate(c))
		}
	}
	if len(e.Candidates) == 0 {
		return l.T("mt_no_prefix")
	}
	return fmt.Sprintf(l.T("mt_none"), l.Candidate(e.Candidates[0]))
}

// IgnoredFormat says why the extractor does not use a format, in the language.
func (l lang) IgnoredFormat(f recon.IgnoredFormat) string {
	if f.Inactive {
		return fmt.Sprintf(l.T("mt_inactive"), f.Format, f.Prefix)
	}
	return fmt.Sprintf(l.T("mt_unusable"), f.Format, f.Prefix)
}

// ErrorText writes err's message in the language: from its data (recon.Say)
// when it has some, the names a file holds (columns, accounts) as code; else
// its message (recon.ErrorMessage), a statement's translated by its sentence
// (stmtError), a not-found in words.
func (l lang) ErrorText(err error) template.HTML {
	return template.HTML(l.errorText(err, true))
}

// ErrorString is ErrorText as plain text, for a page that shows it as text
// (the lists' refused filters). In English it is the API's message, which
// names the query parameter as a developer reads it in the address.
func (l lang) ErrorString(err error) string {
	if l == "en" {
		return recon.ErrorMessage(err)
	}
	return l.errorText(err, false)
}

func (l lang) errorText(err error, html bool) string {
	esc, code := template.HTMLEscapeString, func(s string) string { return "<code>" + template.HTMLEscapeString(s) + "</code>" }
	if !html {
		esc, code = func(s string) string { return s }, func(s string) string { return "“" + s + "”" }
	}
	say := recon.ErrorSay(err)
	if l == "en" && say != nil && strings.HasPrefix(say.Key, "q_") {
		say = nil // a refused filter in English: the API's message (ErrorString)
	}
	if _, known := messages[l][sayKey(say)]; !known {
		if l != "en" && recon.ErrorCode(err) == recon.ENOTFOUND {
			// Its English message names what was looked for; the
			// reader learns the gist.
			return esc(l.T("not_found"))
		}
		// The statement's refusals without data yet, by their English
		// sentence (i18n_stmts.go).
		return esc(stmtError(l, recon.ErrorMessage(err)))
	}
	args := make([]any, len(say.Args))
	for i, a := range say.Args {
		switch {
		case strings.HasPrefix(say.Key, "forbidden_") && i == 0:
			a = l.T("role_" + a)
		case strings.HasPrefix(say.Key, "forbidden_"):
			a = l.T("perm_" + a)
		case strings.HasPrefix(say.Key, "q_") && i == 0 && messages[l]["fl_"+a] != "":
			a = l.T("fl_" + a) // a filter's field by its label
		case strings.HasPrefix(say.Key, "q_") && i > 0:
		default:
			args[i] = code(a)
			continue
		}
		args[i] = esc(a)
	}
	out := ""
	if say.Row > 0 {
		out = fmt.Sprintf(esc(l.T("st_row")), say.Row)
	}
	return out + fmt.Sprintf(esc(l.T(say.Key)), args...)
}

func sayKey(s *recon.Say) string {
	if s == nil {
		return ""
	}
	return s.Key
}
