package server

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The sandbox account holders all share one identity; only the MSISDN-derived fields differ.

func subFor(msisdn string) string {
	h := sha256.Sum256([]byte("momo-sub:" + strings.TrimPrefix(msisdn, "+")))
	return hex.EncodeToString(h[:8])
}

func holderActive(msisdn string) bool {
	n := testNumber(msisdn)
	return n != 50 && n != 51
}

// mtnRecord is the "Sand Box" record the notes show for basic user info and userinfo.
func mtnRecord() obj {
	return obj{
		{"sub", "0"},
		{"name", "Sand Box"},
		{"given_name", "Sand"},
		{"family_name", "Box"},
		{"birthdate", "1976-08-13"},
		{"locale", "sv_SE"},
		{"gender", "MALE"},
		{"updated_at", 1678355127},
	}
}

func (s *Server) basicInfoRecord(msisdn string) obj {
	if !s.spec() {
		return mtnRecord()
	}
	status := "ACTIVE"
	if !holderActive(msisdn) {
		status = "INACTIVE"
	}
	return obj{
		{"given_name", "Ada"},
		{"family_name", "Lindqvist"},
		{"birthdate", "1976-08-13"},
		{"locale", "sv-SE"},
		{"gender", "female"},
		{"status", status},
	}
}

func (s *Server) userInfoRecord(msisdn string) obj {
	if !s.spec() {
		return mtnRecord()
	}
	active := holderActive(msisdn)
	status := "ACTIVE"
	if !active {
		status = "INACTIVE"
	}
	return obj{
		{"sub", subFor(msisdn)},
		{"name", "Ada Maria Lindqvist"},
		{"given_name", "Ada"},
		{"family_name", "Lindqvist"},
		{"middle_name", "Maria"},
		{"email", "ada.lindqvist@example.com"},
		{"email_verified", true},
		{"gender", "female"},
		{"locale", "sv-SE"},
		{"phone_number", "+" + strings.TrimPrefix(msisdn, "+")},
		{"phone_number_verified", true},
		{"address", "Storgatan 1, 111 22 Stockholm, SE"},
		{"updated_at", 1700000000},
		{"status", status},
		{"birthdate", "1976-08-13"},
		{"credit_score", "720"},
		{"active", active},
		{"country_of_birth", "SE"},
		{"region_of_birth", "Stockholm"},
		{"city_of_birth", "Stockholm"},
		{"occupation", "Engineer"},
		{"employer_name", "Example AB"},
		{"identification_type", "PASSPORT"},
		{"identification_value", "SE1234567"},
	}
}

// ---------- 5. basic user information ----------

func (s *Server) hBasicUserInfo(c *call) {
	if !s.gate(c, c.product) {
		return
	}
	c.authAsCode = s.dev(DevBasicInfo401Code)
	c.allowExpired = s.dev(DevBasicInfoExpiredOK)
	if !s.bearer(c, "access") || !s.targetEnv(c) {
		return
	}
	msisdn := c.p["msisdn"]
	if !s.validMSISDN(msisdn) {
		s.badRequest(c, "", "the MSISDN must be an ITU-T E.164 number")
		return
	}
	if testNumber(msisdn) == 50 {
		s.fail(c, 404, "RESOURCE_NOT_FOUND")
		return
	}
	s.writeJSON(c, 200, s.basicInfoRecord(msisdn))
}

// ---------- 8, 12. account holder active ----------

func (s *Server) hActive(c *call) {
	if s.dev(DevHolderAnyEnv) {
		if !s.gate(c, c.product) || !s.bearer(c, "access") {
			return
		}
	} else if !s.business(c, "access") {
		return
	}
	typ, holder := c.p["type"], c.p["holder"]
	valid := false
	switch typ {
	case "msisdn":
		valid = s.validMSISDN(holder)
	case "email":
		valid = validEmail(holder)
	case "party_code":
		valid = isUUID(holder)
	default:
		s.badRequest(c, "", "accountHolderIdType must be msisdn, email or party_code, in lower case")
		return
	}
	if !valid {
		s.badRequest(c, "", "accountHolderId does not match its type")
		return
	}
	result := !(typ != "msisdn" && s.on(CtlEmailHoldersUnknown))
	if typ == "msisdn" {
		n := testNumber(holder)
		if s.spec() {
			result = holderActive(holder)
		} else if c.product != "collection" && s.dev(DevDisbHolderErrorsIgnored) && n >= 52 && n <= 55 {
			result = true
		} else {
			switch n {
			case 50:
				s.fail(c, 404, "RESOURCE_NOT_FOUND")
				return
			case 52:
				s.fail(c, 500, "NOT_ALLOWED")
				return
			case 53:
				s.fail(c, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT")
				return
			case 54:
				s.fail(c, 500, "INTERNAL_PROCESSING_ERROR")
				return
			case 55:
				s.fail(c, 503, "SERVICE_UNAVAILABLE")
				return
			}
		}
	}
	if c.product == "disbursement" && s.dev(DevDisbHolderInverted) {
		result = !result // this copy of the check lost a negation
	}
	if s.spec() {
		s.writeJSON(c, 200, obj{{"active", result}})
		return
	}
	s.writeJSON(c, 200, obj{{"result", result}})
}
