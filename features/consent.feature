@consent
Feature: Consent-based user information
  A partner may read an account holder's detailed user information only with the holder's consent: it
  asks for the consent to the scopes it needs, waits for the holder to answer, redeems the consent for a
  consent token and reads the information with that token, which it can refresh while the consent lasts.
  The service must keep that information behind the consent, honour a consent once, refuse scopes it does
  not offer, and still give the basic information that needs no consent.

  # The spec's own paths: bc-authorize and user information under collection (§4.2 #6–7), the consent token under
  # disbursement (§4.3 #11), redeemed by the API user that asked.
  @smoke @collection @disbursement
  @req:AUTH-CONSENT-FLOW @req:CONSENT-REQUEST-RECORD @req:CONSENT-TOKEN-RECORD @req:COL-BCAUTH-200 @req:COL-USERINFO-200
  @req:COL-USERINFO-RECORD @req:DIS-OAUTH-TOKEN-200 @req:VER-TOKEN-PATHS
  Scenario: A partner with the customer's consent reads their user information
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  # The live service serves the three operations under every product (docs/beyond-spec.md §9).
  @beyond-spec
  @req:BEY-CONSENT-ONE-PRODUCT
  Scenario Outline: A <product> partner completes the consent flow within its own product
    Given a partner subscribed to <product>
    And the partner completes consent within its own product
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

    @collection
    Examples: collection
      | product    |
      | collection |

    @disbursement
    Examples: disbursement
      | product      |
      | disbursement |

  # Which scopes a service offers together the spec does not say (§5 rule 7): a target that refuses the two at once is
  # not tested here. One that takes them gives a token for both (§2.7).
  @req:CONSENT-TOKEN-RECORD
  Scenario: A consent to two scopes gives a consent token for both
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile and their identity
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  @negative
  @req:DIS-OAUTH-WRONG-KEY
  Scenario: A consent redeemed with a wrong API key gives no consent token
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent with a wrong API key
    Then no consent token is given
    And the wrong key is refused as a failed token request

  # §8: a consent token lasts 3600 s by default, so it is no less good for having been used, some seconds later.
  @req:CONSENT-TOKEN-3600
  Scenario: A consent token still reads the user information after it has been used
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    And the partner has read the customer's user information with it
    When some seconds of the consent token's life have passed
    Then the partner reads the customer's user information with the consent token

  # §8: the consent request expires after its expires_in, not before: redeemed late in its life, as late as the run's
  # deadlines allow (half of either), it still gives the consent token.
  @slow
  @req:CONSENT-REQUEST-EXPIRES-IN
  Scenario: A consent asked for a while ago is still redeemed
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When much of the consent request's life has passed
    And the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  @req:CONSENT-TOKEN-3600
  Scenario: A consent token is valid for an hour by default
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent once the customer has consented
    Then the consent token is valid for an hour

  @req:COL-BCAUTH-ACCESS-ONLINE
  Scenario: A partner may ask for consent for online access only
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile, for online access
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  # §4.2 #7 accepts consent_valid_in and does not show its form: a whole number of seconds is our reading, so a target
  # that refuses it is warned of, not failed, unless the run is --strict.
  @req:COL-BCAUTH-CONSENT-VALID-IN
  Scenario: A partner may ask for consent valid for a time of its own
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile, valid for 600 seconds
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  @negative
  @req:EVT-CALLBACK-HOST-REJECTED
  Scenario: A consent request's callback address on another host than the partner registered is refused
    Given a partner subscribed to collection
    When the partner asks a customer for consent to their profile, to be told at another host than it registered
    Then it is refused because the callback host is not the one registered

  @callback
  @req:EVT-CALLBACK-BCAUTH
  Scenario: A partner that gives a callback address is told when the customer has answered
    Given a partner subscribed to collection
    When the partner asks a customer for consent to their profile, to be told at its callback address
    Then a callback arrives at the callback address once the customer has answered
    And the consent redeemed at once on it gives its token, by our reading

  # The spec gives no time for the customer's answer: a target whose customer consents at once passes. The partner
  # then polls at the interval the consent request announced (§2.8), no later: that a poll that waited it is not told
  # to slow_down (CIBA Core §11) is our reading, a warning unless --strict.
  Scenario: A consent the customer has not answered yet gives no consent token
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent at once
    Then the customer has not answered yet
    And polling at the announced interval, the partner is given the consent token without being told to slow down

  # While the consent lasts it can be refreshed (§2.7, §8), a refresh too: at once, with the refresh token the refresh
  # gave (RFC 6749 §6: the old one is discarded), or the one held if it gave none. How a consent is refreshed is our
  # reading; a target that refreshed it once that way refreshes it again.
  @req:CONSENT-REFRESH
  Scenario: A consent token can be refreshed while the consent lasts
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    When the partner refreshes the consent token
    Then the partner reads the customer's user information with the consent token
    And the consent still ends when it did
    And the consent is refreshed again at once with the refresh token the refresh gave

  # RFC 6749 §5.1 asks every answer with a token to forbid caches to keep it; the live service was seen to on /token/
  # only (real-api-notes), so that the consent's token answers do is our reading.
  @req:CONSENT-REFRESH
  Scenario: A consent token and its refresh are not kept by caches on the way, by our reading
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent once the customer has consented
    Then the answer tells caches not to keep it, by our reading
    When the partner has refreshed the consent token
    Then the answer tells caches not to keep it, by our reading

  # §4.3 #11 and §5.2: the OAuth 2.0 token operation takes the partner's Basic credential, whatever the grant. That a
  # consent is refreshed at all is our reading: a target that did not refresh it with the credential is not tested.
  @negative
  @req:CONSENT-REFRESH @req:AUTH-TOKEN-BASIC-ONLY
  Scenario: A consent token is not refreshed without the partner's credential
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    And the partner has refreshed the consent token
    When the partner refreshes the consent token again without its credential
    Then it is refused as a failed token request

  # A refresh token refreshes its own consent (§2.7, §8): the token it gives reads the customer who consented, whatever
  # consent the partner was given since, by another customer.
  @two-customers
  @req:CONSENT-REFRESH
  Scenario: A consent token refreshed after another customer's consent still reads its own customer
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    And the partner has read the customer's user information with it
    And the partner has since been given another customer's consent to their profile
    When the partner refreshes the consent token
    Then the consent token reads the same customer as before

  # §4.2 #7: access_type is online or offline. Its listing shows only 200: that another is refused is our reading.
  @negative
  Scenario: A consent request for an access type the spec does not name is refused, by our reading
    Given a partner subscribed to collection
    When the partner asks a customer for consent to their profile, for an access type the spec does not name
    Then the access type is refused, by our reading

  @negative
  @req:ERR-SET-A
  Scenario: A scope the service does not offer is refused
    Given a partner subscribed to collection
    When the partner asks a customer for consent to a scope the service does not offer
    Then the scope is refused as not offered

  # Refused, the consent request made no consent to tell of: its callback address hears nothing (our reading).
  @negative @callback
  @req:ERR-SET-A
  Scenario: A consent request refused for its scope calls nobody back
    Given a partner subscribed to collection
    When the partner asks a customer for consent to a scope the service does not offer, to be told at its callback address
    Then the scope is refused as not offered
    And nothing arrives at the consent request's callback address

  @negative
  @req:COL-USERINFO-CONSENT-TOKEN
  Scenario: User information needs a consent token, not an ordinary access token
    Given a partner subscribed to collection
    When the partner asks for a customer's user information with its access token
    Then it is refused as unauthorized

  @req:CONSENT-TOKEN-RECORD
  Scenario: A consent token carries the scopes of its own request, not of a later one
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    And the partner has since asked the customer for consent to another scope
    When the partner redeems the consent once the customer has consented
    Then the partner reads the customer's user information with the consent token

  @negative
  @req:AUTH-BUSINESS-ACCESS-TOKEN
  Scenario: A business call needs an access token, not a consent token
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    When the partner asks a customer to pay with the consent token as its credential
    Then it is refused as unauthorized
    And no payment was created

  @negative
  @req:DIS-OAUTH-GRANT-TYPE
  Scenario: A consent is redeemed only with the CIBA grant
    Given a partner subscribed to collection
    And the partner has asked a customer for consent to their profile
    When the partner redeems the consent with another grant type
    Then no consent token is issued for that grant

  @negative
  Scenario: A consent can be redeemed only once
    Given a partner subscribed to collection
    And the partner holds a consent token for a customer's profile
    When the partner redeems the same consent again
    Then the consent is refused as already redeemed

  @smoke
  @req:COL-BASICINFO-200 @req:COL-BASICINFO-RECORD @req:COL-BASICINFO-LOCALE
  Scenario: Basic user information needs no consent
    Given a partner subscribed to collection
    When the partner looks up a customer's basic information
    Then the customer's basic information is returned
