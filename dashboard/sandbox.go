package dashboard

import (
	"net/http"
	"strconv"
	"strings"

	"recon"
)

// The sandbox panel: in test mode (and in live mode on a --sandbox server
// only, as POST /api/v1/sandbox/transfers) play a payer's transfer, pay an
// order, fire a hub event, and list the sandbox banks' identities.

type sandboxView struct {
	Accounts   []*recon.BankAccount
	Events     []string
	Identities []HubIdentity
	Done       string // message key of what was just done
	Result     *recon.IngestResult
	Err        string
	Invoice    string
}

// sandboxOpen reports whether the panel exists for the caller: elsewhere
// its pages are 404, as the API's sandbox transfers.
func (h *Handler) sandboxOpen(q *request) error {
	if q.caller.Livemode() && !h.Sandbox {
		return recon.Errorf(recon.ENOTFOUND, "the sandbox panel exists in test mode: switch to test data")
	}
	return nil
}

// sandbox serves GET /dashboard/sandbox.
func (h *Handler) sandbox(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	v := &sandboxView{Done: map[string]string{"event": "sb_event_done"}[r.URL.Query().Get("done")]}
	return h.renderSandbox(w, r, q, http.StatusOK, v)
}

func (h *Handler) renderSandbox(w http.ResponseWriter, r *http.Request, q *request, status int, v *sandboxView) error {
	var err error
	if v.Accounts, err = h.Store.BankAccounts(r.Context(), q.caller.Tenant); err != nil {
		return err
	}
	if h.Hub != nil && q.caller.May(recon.ActionHub) {
		v.Events, v.Identities = recon.HubEvents, hubIdentities()
	}
	h.render(w, r, status, "sandbox", h.data(r, q, "sandbox", v))
	return nil
}

// sandboxTransfer serves POST /dashboard/sandbox/transfer: an incoming
// transfer through recon.Ingest, as POST /api/v1/sandbox/transfers. With an
// invoice, it pays the order: its payment code as the memo, the amount
// still owed.
func (h *Handler) sandboxTransfer(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	f := r.PostForm
	v := &sandboxView{Invoice: strings.TrimSpace(f.Get("invoice"))}
	account, _ := strconv.ParseInt(f.Get("account"), 10, 64)
	memo := f.Get("memo")
	amount, err := strconv.ParseInt(strings.TrimSpace(f.Get("amount")), 10, 64)
	if v.Invoice != "" {
		o, oerr := h.Store.Order(r.Context(), q.caller.Tenant, v.Invoice)
		if oerr != nil {
			return oerr // another tenant's invoice: 404
		}
		if o.PaymentCode == "" {
			v.Err = "the order has no payment code: it is paid to its virtual account"
			return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
		}
		memo, amount, err = o.PaymentCode, o.Amount-o.PaidAmount, nil
	}
	if err != nil || amount <= 0 || amount > recon.MaxAmount {
		v.Err = "amount must be a whole number of VND from 1 to " + strconv.FormatInt(recon.MaxAmount, 10)
		return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
	}
	now := h.now()
	in := []recon.TransactionInput{{BankAccountID: account, TransactionDate: now.In(h.Location), AmountIn: amount,
		Content: memo, ReferenceNumber: recon.SimulatedReferenceFrom(h.Rand)}}
	res, err := recon.Ingest(r.Context(), h.Store, q.caller.Tenant, now, in)
	if c := recon.ErrorCode(err); c == recon.EINVALID || c == recon.ENOTFOUND {
		v.Err = recon.ErrorMessage(err)
		return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
	} else if err != nil {
		return err
	}
	if h.Kick != nil {
		h.Kick()
	}
	v.Result, v.Done = &res[0], "sb_transfer_done"
	return h.renderSandbox(w, r, q, http.StatusOK, v)
}

// sandboxHubEvent serves POST /dashboard/sandbox/hub-event: the event made
// to happen by linking.Service.Simulate, as `recon trigger`.
func (h *Handler) sandboxHubEvent(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	if h.Hub == nil {
		return errNotFound()
	}
	_, err := h.Hub.Simulate(r.Context(), q.caller.Tenant, !q.caller.Livemode() || h.Sandbox, r.PostForm.Get("event"))
	if c := recon.ErrorCode(err); c == recon.EINVALID || c == recon.EUNAVAILABLE {
		return h.renderSandbox(w, r, q, http.StatusBadRequest, &sandboxView{Err: recon.ErrorMessage(err)})
	} else if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/sandbox?done=event", http.StatusSeeOther)
	return nil
}
