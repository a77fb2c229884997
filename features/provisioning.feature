@provisioning
Feature: Sandbox provisioning
  A partner gets its sandbox credentials by registering an API user, with the host its callbacks go to,
  and creating an API key for it. Every later call depends on these credentials, so the sandbox must
  create them exactly once, read them back, and refuse ids that are malformed, reused or unknown.

  @smoke
  @req:PROV-APIUSER-CREATED-201 @req:PROV-APIUSER-READ-200 @req:VER-PATHS-V1-0
  Scenario: A partner registers an API user with its callback host
    Given a partner subscribed to collection
    When the partner registers an API user
    Then it is created
    And the API user reads back with its callback host

  @smoke
  @req:PROV-APIKEY-CREATED-201 @req:PROV-APIKEY-RECORD
  Scenario: A partner gets a key for its API user
    Given a partner subscribed to collection
    And the partner has registered an API user
    When the partner creates an API key for it
    Then it is created with a key
    And that key gets the API user an access token
    And the API user reads back without giving its key away

  # §4.5 #15 answers every request for a key alike: a later key works as the first did (the first may stop working:
  # the spec does not say).
  @req:PROV-APIKEY-CREATED-201
  Scenario: A partner gets another key for its API user, and it works
    Given a partner subscribed to disbursement
    And the partner has registered an API user
    And the partner has created an API key for it
    When the partner creates another API key for it
    Then it is created with a key
    And that key gets the API user an access token

  @negative
  @req:PROV-APIUSER-DUPLICATE-409 @req:ERR-SET-C @req:ERR-BODY-CODE-MESSAGE
  Scenario: An API user id cannot be registered twice
    Given a partner subscribed to disbursement
    And the partner has registered an API user
    When the partner registers an API user with the same id and another callback host
    Then it is refused as a duplicate
    And the API user that was registered first is unchanged

  @negative
  @req:PROV-APIKEY-NOT-FOUND-404 @req:ERR-SET-C
  Scenario: A key cannot be created for an API user that does not exist
    Given a partner subscribed to collection
    When the partner asks for a key for an API user that does not exist
    Then it is refused as not found

  @negative
  @req:PROV-APIUSER-READ-404 @req:ERR-SET-C
  Scenario: An API user that does not exist cannot be read
    Given a partner subscribed to remittance
    When the partner looks up an API user that does not exist
    Then it is refused as not found

  @negative
  @req:PROV-APIUSER-INVALID-400
  Scenario Outline: An API user id must be a UUID version 4, which <id> is not
    Given a partner subscribed to collection
    When the partner registers an API user with the id "<id>"
    Then it is refused as invalid

    Examples:
      | id                                   |
      | not-a-uuid                           |
      | 6ba7b810-9dad-11d1-80b4-00c04fd430c8 |
