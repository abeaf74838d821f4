package hub

// PageText is the link page's catalogue, for the tests of package hub_test.
var PageText = pageText
