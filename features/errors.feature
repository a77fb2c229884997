@errors
Feature: Errors and refusals
  A partner's integration has to rely on how the service says no: a reference id never makes two
  payments, bad data is refused before anything happens, a call without the product's key or a valid
  token gets nowhere, and every refusal carries the status and code of §7, so that the partner's code can
  react to it rather than guess.

  @collection @negative @smoke
  Scenario: A reference id used twice makes one payment, not two
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner requests 99 again, reusing the reference of that payment
    Then it is refused as a duplicate
    And the first payment is unchanged

  @collection @negative
  Scenario Outline: A request to pay with <problem> is refused as invalid
    Given a partner subscribed to collection
    When the partner requests a payment with <problem>
    Then it is refused as invalid
    And no payment was created

    Examples:
      | problem                                               |
      | an amount of zero                                     |
      | a negative amount                                     |
      | an amount that is not a number                        |
      | an amount given as a number, not a string             |
      | a payer number that is not a phone number             |
      | a payer e-mail address that is not an e-mail address  |
      | a kind of payer id the service does not know          |
      | a payer message longer than 160 characters            |
      | no payer                                              |

  @collection @negative
  Scenario: A reference id must be a UUID version 4
    Given a partner subscribed to collection
    When the partner requests a payment with a reference id that is not a UUID
    Then it is refused as invalid

  @collection @negative
  Scenario: A currency the service does not take is refused
    Given a partner subscribed to collection
    When the partner requests 5 in a currency the service does not take
    Then it is refused with INVALID_CURRENCY
    And no payment was created

  @negative
  Scenario Outline: The gateway turns away a call <mistake>
    Given a partner subscribed to <product>
    When the partner reads its balance <mistake>
    Then the gateway refuses it

    @collection
    Examples:
      | product    | mistake                                           |
      | collection | without a subscription key                        |
      | collection | with a subscription key the gateway does not know |

    @disbursement
    Examples:
      | product      | mistake                                       |
      | disbursement | with the subscription key of another product |

  @collection @negative
  Scenario: A payment's status cannot be read in a target environment the partner may not use
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 3
    When the partner reads that payment in a target environment it may not use
    Then it is refused for the target environment

  @collection @negative
  Scenario: A balance in a currency cannot be read in a target environment the partner may not use
    Given a partner subscribed to collection
    When the partner reads its balance in its currency in a target environment it may not use
    Then it is refused for the target environment

  @disbursement @negative
  Scenario: An account holder cannot be checked in a target environment the partner may not use
    Given a partner subscribed to disbursement
    When the partner checks an account holder in a target environment it may not use
    Then it is refused for the target environment

  @collection @negative
  Scenario: Basic user information is refused to a forged access token
    Given a partner subscribed to collection
    When the partner looks up a customer's basic information with a forged access token
    Then it is refused as unauthorized, with an error code

  @collection @negative
  Scenario: A payment whose reference is not a UUID cannot be read
    Given a partner subscribed to collection
    When the partner reads a payment whose reference is not a UUID
    Then it is refused as invalid

  @collection @negative
  Scenario: A payment that does not exist cannot be read
    Given a partner subscribed to collection
    When the partner reads a payment that does not exist
    Then it is refused as not found
