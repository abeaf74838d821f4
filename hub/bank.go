package hub

// bankBrand is the brand name of a bank code ("" for none).
func bankBrand(code string) string { return code }
