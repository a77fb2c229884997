@tokens
Feature: Access tokens
  A partner authenticates with its API user and API key and gets a short-lived access token for each
  product it is subscribed to; every business call then carries that token. The service must issue a
  token only to the right credentials of that product, honour it only for that product, refuse one that
  was tampered with or has expired, and let a client that renews its token in time work without a break.

  @smoke
  @req:TOKEN-ISSUED-200 @req:TOKEN-RECORD @req:TOKEN-TYPE-BEARER @req:AUTH-BEARER
  Scenario Outline: The <product> product issues an access token to its own API user
    Given a partner subscribed to <product>
    When the partner asks for an access token
    Then an access token is issued
    And the access token opens the partner's <product> account

    @collection @req:VER-TOKEN-PATHS
    Examples: collection
      | product    |
      | collection |

    @disbursement
    Examples: disbursement
      | product      |
      | disbursement |

    @remittance
    Examples: remittance
      | product    |
      | remittance |

  @collection
  @req:AUTH-SCHEME-ANY-CASE
  Scenario: A credential's scheme is read in any case, as its standard says
    Given a partner subscribed to collection
    When the partner asks for an access token, writing its scheme "basic"
    Then an access token is issued
    And the access token opens the partner's account with its scheme written "bearer"

  Scenario Outline: The <product> access token is not kept by caches on the way
    Given a partner subscribed to <product>
    When the partner asks for an access token
    Then an access token is issued
    And the answer tells caches not to keep it

    @collection
    Examples:
      | product    |
      | collection |

    @disbursement
    Examples:
      | product      |
      | disbursement |

    @remittance
    Examples:
      | product    |
      | remittance |

  @disbursement @negative
  @req:TOKEN-FAILED-401
  Scenario Outline: A wrong API key gets no token: <key>
    Given a partner subscribed to disbursement
    When the partner asks for an access token with <key>
    Then no access token is issued

    Examples:
      | key                                              |
      | a wrong API key                                  |
      | another API user's API key                       |
      | its API key with the case of its letters changed |
      | its API key with its last character changed     |

  @collection @negative
  @req:TOKEN-FAILED-401
  Scenario: An API user that has no key yet gets no token
    Given a partner subscribed to collection
    And the partner has registered an API user
    When the partner asks for an access token for that API user with an empty key
    Then no access token is issued

  @remittance @negative
  @req:TOKEN-FAILED-401
  Scenario: A partner without credentials gets no token
    Given a partner subscribed to remittance
    When the partner asks for an access token without credentials
    Then no access token is issued

  @collection @disbursement @negative
  Scenario: An API user of one product gets no token of another
    Given a partner subscribed to collection
    When the partner asks for a disbursement access token
    Then it is refused for the target environment

  @collection @disbursement @negative @strict
  @req:TOKEN-PRODUCT-401
  Scenario: A token of one product does not open another product's operations
    Given a partner subscribed to collection
    When the partner presents its access token to disbursement
    Then it is refused as unauthorized

  @remittance @negative
  @req:AUTH-BEARER-FORGED-401
  Scenario: A forged access token is refused
    Given a partner subscribed to remittance
    When the partner presents an access token whose signature was altered
    Then it is refused as unauthorized

  # §2.6: a token is valid for expires_in seconds from its issue, however often it is used meanwhile.
  @collection @negative @slow
  @req:AUTH-TOKEN-EXPIRY
  Scenario: An access token used all along still expires
    Given a partner subscribed to collection
    And the partner holds an access token that opens its account
    When the partner uses the access token until it has expired, and then once more
    Then it is refused as unauthorized

  @disbursement @negative @slow
  @req:AUTH-TOKEN-EXPIRY
  Scenario: An expired access token is refused
    Given a partner subscribed to disbursement
    And the partner holds an access token that opens its account
    When the partner presents the access token after it has expired
    Then it is refused as unauthorized

  @collection @slow
  @req:AUTH-TOKEN-VALID-UNTIL-EXPIRY
  Scenario: A client that renews its token in time keeps working across expiry
    Given a partner subscribed to collection
    When the partner's client calls once a second for longer than a token lives
    Then none of the client's calls was refused
    And the client renewed its access token on the way
