package hub

import "recon/linking"

// bankBrand is the brand name of a sandbox bank code (the code itself for
// a bank the sandbox does not know, "" for none).
func bankBrand(code string) string {
	if b, ok := linking.SandboxBank(code); ok {
		return b.BrandName
	}
	return code
}
