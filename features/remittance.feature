@remittance
Feature: Remittance balance
  A partner that sends money across borders must know what its remittance account holds before it
  commits to a transfer. The balance must be readable in the partner's currency, and only in the target
  environment its API user belongs to.

  @smoke
  @req:REM-BALANCE-200 @req:BAL-RECORD
  Scenario: A partner reads its remittance balance
    Given a partner subscribed to remittance
    When the partner reads its balance
    Then the balance is given in the partner's currency

  @negative
  @req:REM-BALANCE-TARGET-ENV-500 @req:ERR-SET-B @req:ERR-BODY-CODE-MESSAGE
  Scenario: The balance cannot be read in a target environment the partner may not use
    Given a partner subscribed to remittance
    When the partner reads its balance in a target environment it may not use
    Then it is refused for the target environment
