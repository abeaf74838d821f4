package dashboard

// The words of the statements' balance proofs and of the report's
// balances (proof.go; docs/dashboard.md, Statement proofs and Report), in
// both languages.
var proofMessages = []struct{ key, en, vi string }{
	{"statements", "Statements", "Sao kê"},
	{"result_see_proof", "See the proof of the statement's balances", "Xem đối chiếu số dư của sao kê"},
	{"proof_of", "Statement import", "Lần nhập sao kê"},
	{"proof_proved", "Proved: the closing balance equals the opening balance plus the rows Recon holds for the period.", "Khớp: số dư cuối kỳ bằng số dư đầu kỳ cộng các giao dịch Recon đang có trong kỳ."},
	{"proof_differs", "Not proved: the statement's closing balance minus Recon's is", "Chưa khớp: số dư cuối kỳ của sao kê trừ số dư của Recon là"},
	{"proof_no_balances", "The statement gave no opening or closing balance: nothing to prove.", "Sao kê không có số dư đầu kỳ hoặc cuối kỳ: không có gì để đối chiếu."},
	{"proof_opening", "Opening balance", "Số dư đầu kỳ"},
	{"proof_closing", "Closing balance", "Số dư cuối kỳ"},
	{"proof_statement", "The bank's statement", "Sao kê của ngân hàng"},
	{"proof_recon_amount", "Amount in Recon", "Số tiền trong Recon"},
	{"proof_statement_amount", "Amount on the statement", "Số tiền trên sao kê"},
	{"proof_discontinuity", "Discontinuity: this statement's opening balance does not join the previous statement's closing balance", "Gián đoạn: số dư đầu kỳ của sao kê này không nối tiếp số dư cuối kỳ của sao kê trước"},
	{"proof_previous", "previous statement", "sao kê trước"},
	{"proof_period", "Period", "Kỳ sao kê"},
	{"proof_file", "File", "Tệp"},
	{"proof_note", "Problem", "Vấn đề"},
	{"proof_entries", "Entries", "Số bút toán"},
	{"cause_only_in_recon", "Only in Recon", "Chỉ có trong Recon"},
	{"cause_missing_in_recon", "Missing in Recon", "Thiếu trong Recon"},
	{"cause_amount_differs", "Amount differs", "Số tiền khác nhau"},
	{"cause_possible_duplicate", "Possible duplicate, to resolve", "Có thể trùng lặp, cần xử lý"},
	{"all_accounts", "Every account", "Tất cả tài khoản"},
	{"rp_balances", "Balances: the bank's and Recon's", "Số dư: của ngân hàng và của Recon"},
	{"rp_balances_help", "For each account and day: the closing balance of a statement ending that day, Recon's balance at the end of the day, and the difference with its causes.", "Theo từng tài khoản và ngày: số dư cuối kỳ của sao kê kết thúc vào ngày đó, số dư của Recon cuối ngày, và chênh lệch cùng nguyên nhân."},
	{"rp_bank_balance", "Bank's balance", "Số dư ngân hàng"},
	{"rp_recon_balance", "Recon's balance", "Số dư Recon"},
	{"rp_difference", "Difference", "Chênh lệch"},
	{"rp_causes", "Causes", "Nguyên nhân"},
	{"rp_see_proof", "Proof", "Đối chiếu"},
	{"rp_range", "The report covers at most 366 days: choose a shorter range.", "Báo cáo tối đa 366 ngày: hãy chọn khoảng thời gian ngắn hơn."},
	{"rp_bad_account", "Choose a bank account from the list.", "Hãy chọn một tài khoản ngân hàng trong danh sách."},
	{"rp_balances_csv", "Download the balances as CSV", "Tải số dư dưới dạng CSV"},
}

func init() {
	for _, m := range proofMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
