package dashboard

import (
	"context"
	"net/http"
	"strings"

	"recon"
)

// The seller on the settings screen (docs/invoices.md, The seller): the
// company's legal details as its e-invoices name them, its default invoice
// template and series, and auto_invoice. One form, recon.SellerUpdate's
// rules, as PATCH /api/v1/company and `recon company update`.

// sellerForm is the seller's form, as stored or as typed when refused.
type sellerForm struct {
	LegalName, TaxCode, Address, Phone, Email, BankName, BankAccount, Template, Series string
	AutoInvoice                                                                        bool
}

func sellerFormOf(c *recon.CompanyConfig) *sellerForm {
	s := c.Seller
	return &sellerForm{s.LegalName, s.TaxCode, s.Address, s.Phone, s.Email, s.BankName, s.BankAcct,
		c.Invoicing.Template, c.Invoicing.Series, c.Invoicing.AutoInvoice}
}

// sellerFields are the form's fields, in the order a refusal names them.
var sellerFields = []string{"legal_name", "tax_code", "address", "phone", "email", "bank_name", "bank_account", "invoice_template", "invoice_series", "auto_invoice"}

// saveSeller serves POST /dashboard/settings/seller.
func (h *Handler) saveSeller(w http.ResponseWriter, r *http.Request, q *request) error {
	if !q.caller.Livemode() {
		return recon.Errorf(recon.EFORBIDDEN, "the seller's details are settings of the company, shared by its live and test modes: switch to live data to change them")
	}
	get := func(name string) string { return strings.TrimSpace(r.PostForm.Get(name)) }
	f := &sellerForm{get("legal_name"), get("tax_code"), get("address"), get("phone"), get("email"), get("bank_name"), get("bank_account"),
		get("invoice_template"), get("invoice_series"), r.PostForm.Get("auto_invoice") == "1"}
	up := recon.SellerUpdate{LegalName: &f.LegalName, TaxCode: &f.TaxCode, Address: &f.Address, Phone: &f.Phone, Email: &f.Email,
		BankName: &f.BankName, BankAccount: &f.BankAccount, InvoiceTemplate: &f.Template, InvoiceSeries: &f.Series, AutoInvoice: &f.AutoInvoice}
	err := h.audit(r, q, recon.AuditSellerUpdate, "", nil, func(ctx context.Context) error {
		_, err := h.Store.UpdateCompany(ctx, q.caller.Tenant.ID(), recon.AuditingCompany(ctx, func(c *recon.Company) error { return up.Apply(&c.Config) }))
		return err
	})
	if err == nil {
		http.Redirect(w, r, "/dashboard/settings?saved=seller#seller", http.StatusSeeOther)
		return nil
	}
	e, ok := err.(*recon.Error)
	if !ok || e.Code != recon.EINVALID {
		return err
	}
	field := "tax_code"
	for _, name := range sellerFields {
		if _, ok := e.Fields[name]; ok {
			field = name
			break
		}
	}
	return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{Seller: f, SellerErr: q.lang.T("sl_bad_" + field), SellerErrField: field})
}

var sellerMessages = []struct{ key, en, vi string }{
	{"sl_title", "Seller on invoices", "Người bán trên hóa đơn"},
	{"sl_help", "The company's legal details as its e-invoices show them, and how invoices are issued. The tax code is checked with its check digit.", "Thông tin pháp lý của công ty như hiển thị trên hóa đơn điện tử, và cách xuất hóa đơn. Mã số thuế được kiểm tra bằng chữ số kiểm tra."},
	{"sl_saved", "The seller's details are saved.", "Đã lưu thông tin người bán."},
	{"sl_readonly", "The seller's details are shared by live and test data: switch to live data to change them.", "Thông tin người bán dùng chung cho dữ liệu thật và dữ liệu thử: hãy chuyển sang dữ liệu thật để thay đổi."},
	{"sl_legal_name", "Legal name", "Tên đơn vị"},
	{"sl_tax_code", "Tax code", "Mã số thuế"},
	{"sl_tax_code_help", "10 digits, or 13 for a branch: 0123456789-001.", "10 chữ số, hoặc 13 chữ số cho chi nhánh: 0123456789-001."},
	{"sl_address", "Address", "Địa chỉ"},
	{"sl_phone", "Phone", "Điện thoại"},
	{"sl_email", "E-mail", "Email"},
	{"sl_bank_name", "Bank", "Ngân hàng"},
	{"sl_bank_account", "Bank account number", "Số tài khoản"},
	{"sl_template", "Default template", "Mẫu số mặc định"},
	{"sl_template_1", "1: VAT invoice", "1: Hóa đơn giá trị gia tăng"},
	{"sl_template_2", "2: Sales invoice", "2: Hóa đơn bán hàng"},
	{"sl_series", "Default series", "Ký hiệu mặc định"},
	{"sl_series_help", "Six characters, e.g. C26TAA: C (coded by the tax authority) or K, the year's last two digits, a type letter (T, D, L, M, N, B, G, H, X), two upper-case letters.", "Sáu ký tự, ví dụ C26TAA: C (có mã của cơ quan thuế) hoặc K, hai số cuối của năm, một chữ cái loại hóa đơn (T, D, L, M, N, B, G, H, X), hai chữ cái in hoa."},
	{"sl_auto", "Issue an invoice when an order is paid", "Tự động xuất hóa đơn khi đơn hàng được thanh toán"},
	{"sl_auto_help", "Needs the legal name, tax code, address and series.", "Cần có tên đơn vị, mã số thuế, địa chỉ và ký hiệu."},
	{"sl_bad_legal_name", "The legal name must be one line of at most 400 bytes.", "Tên đơn vị phải là một dòng, tối đa 400 byte."},
	{"sl_bad_tax_code", "The tax code is not valid: 10 digits whose last is the check digit, or 13 for a branch (0123456789-001).", "Mã số thuế không hợp lệ: 10 chữ số với chữ số cuối là chữ số kiểm tra, hoặc 13 chữ số cho chi nhánh (0123456789-001)."},
	{"sl_bad_address", "The address must be one line of at most 500 bytes.", "Địa chỉ phải là một dòng, tối đa 500 byte."},
	{"sl_bad_phone", "The phone number is 8 to 15 digits, optionally after a +.", "Số điện thoại gồm 8 đến 15 chữ số, có thể có dấu + ở đầu."},
	{"sl_bad_email", "The e-mail address is not valid, e.g. ketoan@example.vn.", "Địa chỉ email không hợp lệ, ví dụ ketoan@example.vn."},
	{"sl_bad_bank_name", "The bank's name must be one line of at most 255 bytes.", "Tên ngân hàng phải là một dòng, tối đa 255 byte."},
	{"sl_bad_bank_account", "The account number is at most 30 letters or digits.", "Số tài khoản gồm tối đa 30 chữ cái hoặc chữ số."},
	{"sl_bad_invoice_template", "Choose template 1 or 2.", "Hãy chọn mẫu số 1 hoặc 2."},
	{"sl_bad_invoice_series", "The series is not valid: six characters such as C26TAA.", "Ký hiệu không hợp lệ: sáu ký tự, ví dụ C26TAA."},
	{"sl_bad_auto_invoice", "Automatic invoices need the legal name, tax code, address and series first.", "Cần nhập tên đơn vị, mã số thuế, địa chỉ và ký hiệu trước khi bật tự động xuất hóa đơn."},
}

func init() {
	for _, m := range sellerMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
