package delivery

// ClaimGap is claimGap, for the tests of package delivery_test.
const ClaimGap = claimGap
