@disbursement
Feature: Paying out
  A partner pays money out of its disbursement account: deposits to payees, and refunds of payments it
  collected. The payee is paid only when the deposit ends SUCCESSFUL, so the record must say how each
  payout ended and why it failed, a refund must go back to the customer who paid, a reference must never
  pay out twice, and no payout may take more than the account holds.

  @smoke
  @req:DIS-DEPOSIT-ACCEPTED-202 @req:DIS-DEPOSIT-STATUS-QUERY @req:DIS-DEPOSIT-BODY @req:VER-PATHS-V1-0
  Scenario: A payee who approves receives a deposit
    Given a partner subscribed to disbursement
    When the partner deposits 30.00 to a payee who approves
    Then it is accepted
    And the deposit ends SUCCESSFUL
    And the deposit record shows the amount as 30 and the rest as asked

  Scenario: A deposit to a payee whose wallet fails ends failed with the reason
    Given a partner subscribed to disbursement
    When the partner deposits 30 to a payee whose wallet fails
    Then it is accepted
    And the deposit ends FAILED because INTERNAL_PROCESSING_ERROR

  @req:DIS-REFUND-ACCEPTED-202 @req:DIS-REFUND-STATUS-QUERY @req:DIS-REFUND-OF-RTP
  Scenario: A successful payment is refunded to the customer who paid
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 40 through collection
    When the partner refunds that payment in full
    Then it is accepted
    And the refund ends SUCCESSFUL
    And the refund record shows the amount as 40 and the rest as asked
    And the refund goes back to the customer who paid
    And the payment it refunded still reads as it was asked

  @req:DIS-REFUND-OF-RTP
  Scenario: A refund of a payment that does not exist fails
    Given a partner subscribed to disbursement
    When the partner refunds 10 of a payment that does not exist
    Then the refund fails because the payment is not found

  # §2.4: a refund names the request to pay it refunds; a deposit under that id is none.
  @negative
  @req:DIS-REFUND-OF-RTP
  Scenario: A deposit cannot be refunded as if it were a payment
    Given a partner subscribed to disbursement
    And the partner has deposited 5 to a payee who approves
    When the partner refunds 5 of that deposit, as if it were a payment
    Then the refund fails because the payment is not found

  # 12.50, written back as 12.5 by the live service: the callback must write it as the status record does.
  @callback
  @req:EVT-CALLBACK-DEPOSIT
  Scenario: A partner that gives a callback address is told how its deposit ended
    Given a partner subscribed to disbursement
    When the partner deposits 12.50 to a payee who approves, to be told at its callback address
    Then it is accepted
    And exactly one callback arrives, carrying the deposit's status record

  # A deposit asked for again under its reference is refused; the refused request's callback address hears nothing.
  @callback @negative @slow
  @req:DIS-DEPOSIT-DUPLICATE-409 @req:EVT-CALLBACK-DEPOSIT
  Scenario: A partner that asks again under a deposit's reference is told only where it first asked
    Given a partner subscribed to disbursement
    When the partner deposits 20 to a payee who approves after a while, to be told at its callback address
    And the partner asks for 99 again under the same reference, to be told at an address of its own
    Then it is refused as a duplicate
    And the first is called back at its address, and the refused request at none

  @callback
  @req:EVT-CALLBACK-DEPOSIT
  Scenario Outline: A partner that gives a callback address is told of a deposit to a payee <who>
    Given a partner subscribed to disbursement
    When the partner deposits 12 to a payee <who>, to be told at its callback address
    Then it is accepted
    And the partner looks at the deposit meanwhile
    And exactly one callback arrives, carrying the deposit's status record

    Examples:
      | who                         |
      | who rejects the payment     |
      | whose wallet fails          |
      | who lets the payment expire |

    # An outcome that comes after a while is called back too, not only one decided at once, and looked at meanwhile.
    @slow
    Examples:
      | who                        |
      | who approves after a while |

  @callback
  @req:EVT-CALLBACK-REFUND
  Scenario: A partner that gives a callback address is told how its refund ended
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 12.50 through collection
    When the partner refunds that payment in full, to be told at its callback address
    Then it is accepted
    And exactly one callback arrives, carrying the refund's status record

  # A partner's listener may be down for a moment: a target that calls again must tell the same record (the spec
  # promises no retry, so one that does not is not tested here, never failed).
  @callback
  @req:EVT-CALLBACK-DEPOSIT
  Scenario: A partner whose callback address refused the first delivery is told the same deposit record again
    Given a partner subscribed to disbursement
    When the partner deposits 12.50 to a payee who approves, to be told at a callback address that refuses the first delivery
    Then it is accepted
    And a callback told again carries the deposit's status record, if one is told again

  @callback
  @req:EVT-CALLBACK-REFUND
  Scenario: A partner whose callback address refused the first delivery is told the same refund record again
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 12.50 through collection
    When the partner refunds that payment in full, to be told at a callback address that refuses the first delivery
    Then it is accepted
    And a callback told again carries the refund's status record, if one is told again

  # The payment's callback address is still the partner's after the payment ended: what arrives there after the
  # payment was refunded must still be the payment's record (the refund is told at its own address, if any).
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A payment's callback address hears only the payment's record after it is refunded
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 10 through collection, telling its callback address
    When the partner refunds that payment in full
    Then it is accepted
    And every callback at the payment's address, however late, carries its status record

  # The host is the calling API user's own (real-api-notes, callbacks, observed): not the host of the latest one registered.
  @callback
  @req:EVT-CALLBACK-DEPOSIT
  Scenario: A partner's own callback host is still taken for a deposit after another API user registers another host
    Given a partner subscribed to disbursement
    And another API user has been registered since, with another callback host
    When the partner deposits 12 to a payee who approves, to be told at its callback address
    Then it is accepted, as the live service holds a callback to the caller's own host

  # The live service refuses a callback address on another host than the API user registered on every creation
  # that takes one, not only on a request to pay (real-api-notes, callbacks: observed).
  @negative
  @req:EVT-CALLBACK-HOST-REJECTED @req:ERR-SET-B @req:ERR-BODY-CODE-MESSAGE
  Scenario: A deposit's callback address on another host than the partner registered is refused
    Given a partner subscribed to disbursement
    When the partner deposits 12 to a payee who approves, to be told at another host than it registered
    Then it is refused because the callback host is not the one registered
    And no deposit was created

  @negative
  @req:EVT-CALLBACK-HOST-REJECTED @req:ERR-SET-B @req:ERR-BODY-CODE-MESSAGE
  Scenario: A refund's callback address on another host than the partner registered is refused
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 12 through collection
    When the partner refunds that payment in full, to be told at another host than it registered
    Then it is refused because the callback host is not the one registered
    And no refund was created

  # A refund carries its own amount: one that moved the payment's amount instead would take more than was refunded.
  @beyond-spec
  @req:BEY-BALANCE @req:TXN-MONEY-ONCE
  Scenario: A refund of part of a payment moves only the part refunded
    Given a new partner subscribed to disbursement
    And the partner has seen its balance move with a first deposit
    And a customer who approves has paid the partner 10 through collection
    And the partner has read its balance
    When the partner's refund of 4 of that payment has ended
    Then the balance has moved by what the refund called for
    And the payment it refunded still reads as it was asked

  # Every refund takes its own amount: a second part of a payment refunded is debited as the first was, neither skipped
  # because the payment was refunded before nor added to what was refunded before. The balance is read again only once
  # it has moved with the first part (the spec gives no time for a balance to move).
  @beyond-spec
  @req:BEY-BALANCE @req:TXN-MONEY-ONCE
  Scenario: A second refund of part of a payment moves only its own part
    Given a new partner subscribed to disbursement
    And the partner has seen its balance move with a first deposit
    And a customer who approves has paid the partner 10 through collection
    And the partner has read its balance
    And the partner's refund of 4 of that payment has ended
    And the balance has moved by what the refund called for
    And the partner has read its balance
    When the partner's refund of 3 of that payment has ended
    Then the balance has moved by what the refund called for

  # A refund carries its own amount (§2.4): its record shows that, not its payment's, and the next refund of the same
  # payment overwrites nothing. That a part of a payment may be refunded is our reading: a refusal is no departure.
  @req:DIS-REFUND-STATUS-QUERY
  Scenario: Refunds of parts of a payment each read back their own amount
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 10 through collection
    When the partner refunds 4 of that payment, then 3 more
    Then each refund is refused, or reads back as it was asked

  # A refund that fails moves nothing: one that took its amount anyway would pay out money nobody received.
  @beyond-spec
  @req:BEY-BALANCE @req:TXN-MONEY-ONCE @req:DIS-REFUND-OF-RTP
  Scenario: A refund of a payment that does not exist moves no money
    Given a new partner subscribed to disbursement
    And the partner has seen its balance move with a first refund
    And the partner has read its balance
    When the partner refunds 10 of a payment that does not exist
    Then the refund fails because the payment is not found
    And the balance has moved by what the refund called for

  # A refund is no deposit, nor a deposit a refund: read under its id as the other, it is not found (our reading: a
  # warning unless --strict).
  @negative
  @req:TXN-UNKNOWN-404
  Scenario: A refund's reference id is not read as a deposit
    Given a partner subscribed to disbursement
    And a customer who approves has paid the partner 12 through collection
    And the partner refunds that payment in full
    When the partner reads a deposit under the refund's reference id
    Then it is refused as not found

  @negative
  @req:TXN-UNKNOWN-404
  Scenario: A deposit's reference id is not read as a refund
    Given a partner subscribed to disbursement
    And the partner has deposited 5 to a payee who approves
    When the partner reads a refund under the deposit's reference id
    Then it is refused as not found

  @negative
  @req:DIS-DEPOSIT-DUPLICATE-409 @req:ERR-SET-B @req:ERR-BODY-CODE-MESSAGE
  Scenario: A deposit reference cannot be used twice
    Given a partner subscribed to disbursement
    And the partner has deposited 5 to a payee who approves
    When the partner deposits 5 to a payee who approves again, with the same reference
    Then it is refused as a duplicate

  @stateful @beyond-spec
  @req:BEY-BALANCE
  Scenario: A deposit larger than the balance fails for lack of funds
    Given a new partner subscribed to disbursement
    And the partner has read its balance
    When the partner deposits more than its balance to a payee who approves
    Then it is accepted
    And the deposit ends FAILED because NOT_ENOUGH_FUNDS

  # Payouts under way together are covered as one, on a target that fails one larger than the balance (the premise
  # funds-checked): one that checks each against the balance it read when it was accepted pays both, and overdraws.
  # Both the rule and this are our readings (core/profiles.ts READINGS): a warning unless --strict.
  @beyond-spec @slow
  @req:BEY-BALANCE @req:TXN-MONEY-ONCE
  Scenario: Two deposits under way together take no more than the balance
    Given a new partner subscribed to disbursement
    And the partner has seen its balance move with a first deposit
    And the partner has seen a deposit of more than its balance fail
    When the partner deposits more than half its balance to a payee who approves after a while, twice at once
    Then the deposits do not all succeed, and the balance has moved by what each called for

  @smoke
  @req:DIS-HOLDER-ACTIVE
  Scenario: A payee is an active account holder
    Given a partner subscribed to disbursement
    When the partner checks whether a payee who approves is an active account holder
    Then the account holder is active

  # Which holders a target knows is its own (the spec names none): whoever they are, the answer is true or false.
  @req:DIS-HOLDER-ACTIVE
  Scenario Outline: Whether a payee <who> is an active account holder is answered true or false
    Given a partner subscribed to disbursement
    When the partner checks whether a payee <who> is an active account holder
    Then whether the holder is active is answered true or false

    Examples:
      | who                         |
      | whose wallet fails          |
      | who rejects the payment     |
      | who lets the payment expire |
      | who never answers           |

  # Each kind of id §4.2 #8 names besides a phone number, in a form that fits it: answered true or false too.
  @req:DIS-HOLDER-ACTIVE
  Scenario Outline: Whether the holder of <kind> is an active account holder is answered true or false, through disbursement
    Given a partner subscribed to disbursement
    When the partner checks whether the holder of <kind> "<id>" is an active account holder
    Then whether the holder is active is answered true or false

    Examples:
      | kind              | id                                   |
      | an e-mail address | customer@example.com                 |
      | a party code      | 3f1c2a4e-6b7d-4e8f-9a0b-1c2d3e4f5a6b |

  @uncertain
  @req:DIS-HOLDER-NOT-ACTIVE
  Scenario Outline: A payee <who> is not an active account holder
    Given a partner subscribed to disbursement
    When the partner checks whether a payee <who> is an active account holder
    Then the account holder is reported <answer>

    Examples:
      | who                       | answer         |
      | who is not registered     | not registered |
      | whose account is inactive | inactive       |

  @negative
  @req:DIS-HOLDER-TYPE-LOWERCASE
  Scenario: The kind of payee id must be written in lower case
    Given a partner subscribed to disbursement
    When the partner checks a payee who approves, naming the kind of id in upper case
    Then it is refused as invalid

  @negative
  @req:DIS-HOLDER-ID-FORMAT
  Scenario Outline: A payee's id must fit its kind, which "<id>" as <kind> does not
    Given a partner subscribed to disbursement
    When the partner checks whether the holder of <kind> "<id>" is an active account holder
    Then it is refused as invalid

    Examples:
      | kind              | id             |
      | a phone number    | abc            |
      | an e-mail address | not-an-address |
      | a party code      | 12345          |
