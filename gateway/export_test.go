package gateway

// PageText is the payer's pages' catalogue, for the tests of package
// gateway_test.
var PageText = pageText
