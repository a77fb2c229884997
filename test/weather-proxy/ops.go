package main

import "strings"

// Operation is one operation of the MoMo Open API as listed in §4 of
// momo-api-spec.md, with the decision whether the proxy may answer it with an
// injected 500 INTERNAL_PROCESSING_ERROR.
type Operation struct {
	Num    string // number in the spec ("S" for the status queries of §4.6)
	Method string
	Path   string // template; {name} matches one non-empty path segment
	Has500 bool   // internal-error may be injected
	Clause string // the words of the spec that decide Has500
}

// Operations is the table the README reproduces. Only operations whose §4
// listing includes a 500 response, and whose error-code set (§7) contains
// INTERNAL_PROCESSING_ERROR or is not restricted, get Has500.
var Operations = []Operation{
	{"1", "POST", "/collection/token/", true,
		"§4.2 #1: \"500: error, no body described.\" (no error-code set is assigned to this operation in §7)"},
	{"2", "POST", "/collection/v1_0/requesttopay", true,
		"§4.2 #2: \"500: internal error, code `INTERNAL_PROCESSING_ERROR` in the shown case.\""},
	{"3", "POST", "/collection/v1_0/requesttopay/{referenceId}/deliverynotification", true,
		"§4.2 #3 response table: status 500, \"Unexpected internal error.\""},
	{"4", "GET", "/collection/v1_0/account/balance/{currency}", true,
		"§4.2 #4: \"500: error body `{ code, message }`; the shown code is `NOT_ALLOWED_TARGET_ENVIRONMENT`.\" §7 set A (balance) contains `INTERNAL_PROCESSING_ERROR`."},
	{"5", "GET", "/collection/v1_0/accountholder/msisdn/{accountHolderMSISDN}/basicuserinfo", true,
		"§4.2 #5: \"200 ... 401: `{ error }`. 500: error.\""},
	{"6", "GET", "/collection/oauth2/v1_0/userinfo", false,
		"§4.2 #6 lists only \"200: user information record (2.11).\""},
	{"7", "POST", "/collection/v1_0/bc-authorize", false,
		"§4.2 #7 lists only \"200: consent request record (2.8).\""},
	{"8", "GET", "/collection/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active", true,
		"§4.2 #8: \"500: error `{ code, message }`; the shown code is `NOT_ALLOWED_TARGET_ENVIRONMENT`.\" §7 set A (account status on collection) contains `INTERNAL_PROCESSING_ERROR`."},
	{"9", "POST", "/disbursement/v1_0/refund", true,
		"§4.3 #9: \"500: internal error (the shown case is code `INVALID_CURRENCY`).\" §7 set B contains `INTERNAL_PROCESSING_ERROR`."},
	{"10", "POST", "/disbursement/v1_0/deposit", true,
		"§4.3 #10: \"Responses: 202, 400, 409 and 500 as for refund.\" §7 set B contains `INTERNAL_PROCESSING_ERROR`."},
	{"11", "POST", "/disbursement/oauth2/token/", false,
		"§4.3 #11 lists only \"200: consent token record (2.7).\""},
	{"12", "GET", "/disbursement/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active", true,
		"§4.3 #12: \"Same parameters, headers and semantics as collection endpoint 8. The shown 500 code is `NOT_ALLOWED_TARGET_ENVIRONMENT`.\" §7 set B contains `INTERNAL_PROCESSING_ERROR`."},
	{"13", "GET", "/remittance/v1_0/account/balance", true,
		"§4.4 #13: \"500: error `{ code, message }`.\" §7 set B (remittance balance) contains `INTERNAL_PROCESSING_ERROR`."},
	{"14", "POST", "/v1_0/apiuser", false,
		"§4.5 #14 lists \"500 internal error\", but §7 restricts sandbox provisioning to error code set C (`RESOURCE_NOT_FOUND`, `RESOURCE_ALREADY_EXIST`), which has no `INTERNAL_PROCESSING_ERROR`: the fixed body would not be allowed."},
	{"15", "POST", "/v1_0/apiuser/{X-Reference-Id}/apikey", false,
		"§4.5 #15 lists \"500\", but code set C (§7) has no `INTERNAL_PROCESSING_ERROR` (as #14)."},
	{"16", "GET", "/v1_0/apiuser/{X-Reference-Id}", false,
		"§4.5 #16 lists \"500\", but code set C (§7) has no `INTERNAL_PROCESSING_ERROR` (as #14)."},
	{"S", "GET", "/collection/v1_0/requesttopay/{referenceId}", false,
		"§4.6: status query; \"paths, headers and response bodies other than what is stated there: not shown\" (no 500 listed)."},
	{"S", "GET", "/disbursement/v1_0/refund/{referenceId}", false,
		"§4.6: status query; no responses listed (no 500)."},
	{"S", "GET", "/disbursement/v1_0/deposit/{referenceId}", false,
		"§4.6: status query; no responses listed (no 500)."},
}

// MatchOperation returns the operation a request is for, or nil. The match is
// exact on method and on every path segment (a trailing slash counts), so a
// request the spec does not list is never answered with an injected 500.
func MatchOperation(method, path string) *Operation {
	segs := strings.Split(path, "/")
	for i := range Operations {
		op := &Operations[i]
		if op.Method != method {
			continue
		}
		if matchSegments(strings.Split(op.Path, "/"), segs) {
			return op
		}
	}
	return nil
}

func matchSegments(tmpl, segs []string) bool {
	if len(tmpl) != len(segs) {
		return false
	}
	for i, t := range tmpl {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if t != segs[i] {
			return false
		}
	}
	return true
}

// Allows500 reports whether internal-error may be injected on this request.
func Allows500(method, path string) bool {
	op := MatchOperation(method, path)
	return op != nil && op.Has500
}
