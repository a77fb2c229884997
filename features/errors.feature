@errors
Feature: Errors and refusals
  A partner's integration has to rely on how the service says no: a reference id never makes two
  payments, bad data is refused before anything happens, a call without the product's key or a valid
  token gets nowhere, and every refusal carries the status and code of §7, so that the partner's code can
  react to it rather than guess.

  @collection @negative @smoke
  @req:COL-RTP-DUPLICATE-409 @req:ERR-SET-A @req:ERR-BODY-CODE-MESSAGE
  Scenario: A reference id used twice makes one payment, not two
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner requests 99 again, reusing the reference of that payment
    Then it is refused as a duplicate
    And the first payment is unchanged

  @collection @negative
  @req:COL-RTP-INVALID-CURRENCY @req:ERR-SET-A
  Scenario: A currency the service does not take is refused
    Given a partner subscribed to collection
    When the partner requests 5 in a currency the service does not take
    Then the currency is refused
    And no payment was created

  # Refused, it made nothing to tell of: its callback address hears nothing.
  @collection @negative @callback
  @req:COL-RTP-INVALID-CURRENCY
  Scenario: A request to pay refused for its currency calls nobody back
    Given a partner subscribed to collection
    When the partner requests 5 in a currency the service does not take, to be told at its callback address
    Then the currency is refused
    And nothing arrives at its callback address

  @collection @negative
  @req:COL-DN-INVALID-400
  Scenario: A delivery notification longer than 160 characters is refused as invalid
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery with a message longer than 160 characters
    Then it is refused as invalid

  # §2.13 does not make the message required: a target that takes a notification without one is warned, not failed,
  # unless the run is --strict.
  @collection @negative
  @req:COL-DN-INVALID-400
  Scenario: A delivery notification without its message is refused, by our reading
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery without a message
    Then it is refused as invalid

  @disbursement @negative
  @req:DIS-REFUND-DUPLICATE-409 @req:ERR-SET-B
  Scenario: A refund reference cannot be used twice
    Given a partner subscribed to disbursement
    And the partner has refunded a payment of 10 by a customer who approves
    When the partner refunds that payment again, with the same reference
    Then it is refused as a duplicate

  @disbursement @negative
  @req:DIS-DEPOSIT-INVALID-CURRENCY @req:ERR-SET-B
  Scenario: A deposit in a currency the service does not take is refused
    Given a partner subscribed to disbursement
    When the partner deposits 5 to a payee who approves in a currency the service does not take
    Then the currency is refused
    And no deposit was created

  @disbursement @negative @callback
  @req:DIS-DEPOSIT-INVALID-CURRENCY
  Scenario: A deposit refused for its currency calls nobody back
    Given a partner subscribed to disbursement
    When the partner deposits 5 to a payee who approves in a currency the service does not take, to be told at its callback address
    Then the currency is refused
    And nothing arrives at its callback address

  @disbursement @negative
  @req:DIS-REFUND-INVALID-CURRENCY @req:ERR-SET-B
  Scenario: A refund in a currency the service does not take is refused
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 10 through collection
    When the partner refunds that payment in a currency the service does not take
    Then the currency is refused
    And no refund was created

  @disbursement @negative @callback
  @req:DIS-REFUND-INVALID-CURRENCY
  Scenario: A refund refused for its currency calls nobody back
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 10 through collection
    When the partner refunds that payment in a currency the service does not take, to be told at its callback address
    Then the currency is refused
    And nothing arrives at its callback address

  # Asked for in a currency, a balance is given in that currency or refused: never in another.
  @collection @negative
  @req:COL-BALANCE-200 @req:ERR-SET-A
  Scenario: A balance asked for in a currency the service does not take is not given in another
    Given a partner subscribed to collection
    When the partner reads its balance in a currency the service does not take
    Then the currency is refused, or the balance is given in it

  @collection @negative
  @req:COL-BALANCE-INVALID-400
  Scenario: A balance cannot be read in a currency that is not an ISO 4217 code
    Given a partner subscribed to collection
    When the partner reads its balance in the currency "euro"
    Then it is refused as invalid

  @collection @negative
  @req:COL-BALANCE-INVALID-400
  Scenario: A balance cannot be read in a currency code written in lower case
    Given a partner subscribed to collection
    When the partner reads its balance in the currency "eur"
    Then it is refused, by our reading as invalid

  @collection @negative
  @req:COL-HOLDER-ID-FORMAT
  Scenario Outline: An account holder id must fit its kind, which "<id>" as <kind> does not
    Given a partner subscribed to collection
    When the partner checks whether the holder of <kind> "<id>" is an active account holder
    Then it is refused as invalid

    Examples:
      | kind              | id             |
      | a phone number    | abc            |
      | an e-mail address | not-an-address |
      | a party code      | 12345          |

  @disbursement @negative
  @req:DIS-AUTHORIZATION-REQUIRED @req:ERR-401-ERROR-BODY
  Scenario: A business call without an access token is refused
    Given a partner subscribed to disbursement
    When the partner deposits 5 to a payee who approves without an access token
    Then it is refused as unauthorized, with an error code
    And no deposit was created

  @disbursement @negative
  @req:DIS-AUTHORIZATION-REQUIRED @req:ERR-401-ERROR-BODY
  Scenario: A refund without an access token is refused
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 10 through collection
    When the partner refunds that payment without an access token
    Then it is refused as unauthorized, with an error code
    And no refund was created

  @negative
  Scenario Outline: The gateway turns away a call <mistake>
    Given a partner subscribed to <product>
    When the partner reads its balance <mistake>
    Then the gateway refuses it

    @collection @req:AUTH-SUBSCRIPTION-KEY
    Examples:
      | product    | mistake                                           |
      | collection | without a subscription key                        |
      | collection | with a subscription key the gateway does not know |

    @remittance @req:AUTH-SUBSCRIPTION-KEY-PRODUCT
    Examples:
      | product    | mistake                                       |
      | remittance | with the subscription key of another product |

  @negative
  Scenario Outline: A <transaction>'s status cannot be read in a target environment the partner may not use
    Given a partner subscribed to <product>
    And <it was made>
    When the partner reads that <transaction> in a target environment it may not use
    Then it is refused for the target environment

    @collection @req:COL-RTP-STATUS-TARGET-ENV-500 @req:ERR-SET-A
    Examples:
      | transaction | product    | it was made                                    |
      | payment     | collection | a customer who approves has paid the partner 3 |

    @disbursement @req:DIS-DEPOSIT-STATUS-TARGET-ENV-500 @req:ERR-SET-B
    Examples:
      | transaction | product      | it was made                                         |
      | deposit     | disbursement | the partner has deposited 3 to a payee who approves |

    @disbursement @req:DIS-REFUND-STATUS-TARGET-ENV-500 @req:ERR-SET-B
    Examples:
      | transaction | product      | it was made                                                        |
      | refund      | disbursement | the partner has refunded a payment of 3 by a customer who approves |

  @negative
  Scenario Outline: A <product> balance cannot be read in a target environment the partner may not use
    Given a partner subscribed to <product>
    When the partner reads its balance in a target environment it may not use
    Then it is refused for the target environment

    @collection @req:COL-BALANCE-TARGET-ENV-500 @req:ERR-SET-A
    Examples:
      | product    |
      | collection |

    @disbursement @beyond-spec @req:BEY-BALANCE
    Examples:
      | product      |
      | disbursement |

  @negative
  Scenario Outline: An account holder cannot be checked through <product> in a target environment the partner may not use
    Given a partner subscribed to <product>
    When the partner checks an account holder in a target environment it may not use
    Then it is refused for the target environment

    @collection @req:COL-HOLDER-TARGET-ENV-500 @req:ERR-SET-A
    Examples:
      | product    |
      | collection |

    @disbursement @req:DIS-HOLDER-TARGET-ENV-500 @req:ERR-SET-B
    Examples:
      | product      |
      | disbursement |

  @collection @negative
  @req:COL-BASICINFO-401 @req:ERR-401-ERROR-BODY
  Scenario: Basic user information is refused to a forged access token
    Given a partner subscribed to collection
    When the partner looks up a customer's basic information with a forged access token
    Then it is refused as unauthorized, with an error code

  # Which is told first, a bad token or an unknown id, the spec does not say: our reading is the token, so that a
  # caller without one learns nothing of which ids exist (a warning unless --strict).
  @negative
  @req:AUTH-BEARER-FORGED-401
  Scenario: A read of a payment that does not exist with a forged access token is refused as unauthorized
    Given a partner subscribed to collection
    When the partner reads a payment that does not exist with a forged access token
    Then it is refused as unauthorized

  @provisioning @negative
  @req:PROV-APIKEY-INVALID-400
  Scenario: A key cannot be created for an API user id that is not a UUID
    Given a partner subscribed to collection
    When the partner asks for a key for the API user "not-a-uuid"
    Then it is refused as invalid

  @provisioning @negative
  @req:PROV-APIUSER-READ-400
  Scenario: An API user id that is not a UUID cannot be read
    Given a partner subscribed to collection
    When the partner looks up the API user "not-a-uuid"
    Then it is refused as invalid

  @provisioning @negative
  @req:PROV-APIUSER-INVALID-400
  Scenario: An API user cannot be registered with its callback host given as a number
    Given a partner subscribed to collection
    When the partner registers an API user with its callback host given as a number, not a string
    Then it is refused as invalid
    And no API user was registered

  @provisioning @negative
  @req:PROV-APIUSER-INVALID-400
  Scenario: An API user cannot be registered without a callback host
    Given a partner subscribed to collection
    When the partner registers an API user without a callback host
    Then it is refused as invalid
    And no API user was registered
