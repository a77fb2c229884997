@beyond-spec
Feature: Operations the live service has beyond the spec
  Partners' client libraries call operations that MTN's live sandbox serves and the spec does not list:
  transfers, requests to withdraw, the second version of deposits and refunds, and account operations under
  every product. Where a target offers them it must answer them as the live service does. A target is held
  to them only when the run asks for them (--tags @beyond-spec); the reference sandbox always serves them.
  docs/beyond-spec.md gives the public material behind each.

  @smoke
  @req:BEY-TRANSFER-ACCEPTED-202 @req:BEY-TRANSFER-STATUS-QUERY
  Scenario Outline: A <product> partner transfers money to a payee who approves
    Given a partner subscribed to <product>
    When the partner transfers 25.50 to a payee who approves
    Then it is accepted
    And the transfer ends SUCCESSFUL
    And the transfer record shows the amount as 25.5 and the rest as asked

    @disbursement
    Examples:
      | product      |
      | disbursement |

    @remittance
    Examples:
      | product    |
      | remittance |

  @disbursement
  @req:BEY-TRANSFER-FAILED
  Scenario: A transfer to a payee whose wallet fails ends failed with the reason
    Given a partner subscribed to disbursement
    When the partner transfers 10 to a payee whose wallet fails
    Then it is accepted
    And the transfer ends FAILED because INTERNAL_PROCESSING_ERROR

  @remittance @negative
  @req:BEY-TRANSFER-DUPLICATE-409
  Scenario: A transfer reference cannot be used twice
    Given a partner subscribed to remittance
    And the partner has transferred 5 to a payee who approves
    When the partner transfers 7 to a payee who approves again, with the same reference
    Then it is refused as a duplicate

  @disbursement @callback
  @req:BEY-TRANSFER-CALLBACK
  Scenario: A partner that gives a callback address is told how its transfer ended
    Given a partner subscribed to disbursement
    When the partner transfers 12 to a payee who approves, to be told at its callback address
    Then it is accepted
    And exactly one callback arrives, carrying the transfer's status record

  @disbursement @callback
  @req:BEY-TRANSFER-CALLBACK
  Scenario: A partner whose callback address refused the first delivery is told the same transfer record again
    Given a partner subscribed to disbursement
    When the partner transfers 12 to a payee who approves, to be told at a callback address that refuses the first delivery
    Then it is accepted
    And a callback told again carries the transfer's status record, if one is told again

  @disbursement
  @req:BEY-DEPOSIT-V2
  Scenario: A payee receives a deposit made through the second version of the operation
    Given a partner subscribed to disbursement
    When the partner deposits 14.00 to a payee who approves through the second version of the operation
    Then it is accepted
    And the deposit ends SUCCESSFUL
    And the deposit record shows the amount as 14 and the rest as asked

  @disbursement
  @req:BEY-REFUND-V2
  Scenario: A payment is refunded through the second version of the operation
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 18 through collection
    When the partner refunds that payment in full through the second version of the operation
    Then it is accepted
    And the refund ends SUCCESSFUL
    And the refund goes back to the customer who paid

  @collection
  @req:BEY-WITHDRAW-V1
  Scenario: A customer who approves withdraws what the partner asked
    Given a partner subscribed to collection
    When the partner asks a customer who approves to withdraw 20
    Then it is accepted
    And the withdrawal ends SUCCESSFUL
    And the withdrawal record shows the amount as 20 and the rest as asked

  @collection
  @req:BEY-WITHDRAW-V2
  Scenario: A customer who rejects a withdrawal asked through the second version is not charged
    Given a partner subscribed to collection
    When the partner asks a customer who rejects the payment to withdraw 20 through the second version of the operation
    Then it is accepted
    And the withdrawal ends FAILED because APPROVAL_REJECTED

  @remittance @smoke
  @req:BEY-REM-HOLDER-ACTIVE
  Scenario: A remittance partner checks that a payee is an active account holder
    Given a partner subscribed to remittance
    When the partner checks whether a payee who approves is an active account holder
    Then the account holder is active

  @req:BEY-BASICINFO
  Scenario Outline: A <product> partner reads a customer's basic information without consent
    Given a partner subscribed to <product>
    When the partner looks up a customer's basic information
    Then the customer's basic information is returned

    @disbursement
    Examples:
      | product      |
      | disbursement |

    @remittance
    Examples:
      | product    |
      | remittance |

  @req:BEY-BALANCE-IN-CURRENCY
  Scenario Outline: A <product> partner reads its balance in its own currency
    Given a partner subscribed to <product>
    When the partner reads its balance in its own currency
    Then the balance is given in the partner's currency

    @disbursement
    Examples:
      | product      |
      | disbursement |

    @remittance
    Examples:
      | product    |
      | remittance |

  @disbursement
  @req:BEY-DELIVERY-NOTIFICATION
  Scenario: A payee who received a deposit is notified of the delivery through disbursement
    Given a partner subscribed to disbursement
    And the partner has deposited 9 to a payee who approves
    And the deposit ends SUCCESSFUL
    When the partner notifies the customer of delivery
    Then the notification is enqueued
