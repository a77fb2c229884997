@collection
Feature: Collecting payments
  A merchant asks a customer to pay, the customer approves or declines on their phone, and the merchant
  learns the outcome from the payment's record or from a callback, then ships the goods and reconciles on
  it. So the record must say exactly what was asked and how it ended, the sandbox's test customers must
  end as documented, the merchant's balance must follow its payments, and no merchant may see another's.

  @smoke
  @req:COL-RTP-ACCEPTED-202 @req:COL-RTP-STATUS-QUERY @req:COL-RTP-AUTHORIZED @req:VER-PATHS-V1-0
  Scenario: A customer who approves pays what was asked
    Given a partner subscribed to collection
    When the partner requests 12.50 from a customer who approves
    Then it is accepted
    And the payment ends SUCCESSFUL with a financial transaction id
    And the payment record shows the amount as 12.5 and the rest as asked

  # The test numbers are whole numbers (real-api-notes): one that only ends like a test number's is any other
  # customer's, whose payment succeeds at once.
  @req:COL-RTP-ACCEPTED-202 @req:COL-RTP-AUTHORIZED
  Scenario: A customer whose number only ends like a test number's pays as any other
    Given a partner subscribed to collection
    When the partner requests 5 from a customer whose number only ends like a failing one
    Then it is accepted
    And the payment ends SUCCESSFUL with a financial transaction id

  Scenario Outline: A payment by a customer <who> ends <status> because <reason>
    Given a partner subscribed to collection
    When the partner requests 5 from a customer <who>
    Then it is accepted
    And the payment ends <status> because <reason>

    @req:COL-RTP-DECLINED
    Examples: Observed on the live sandbox
      | who                         | status | reason                    |
      | whose wallet fails          | FAILED | INTERNAL_PROCESSING_ERROR |
      | who rejects the payment     | FAILED | APPROVAL_REJECTED         |
      | who lets the payment expire | FAILED | EXPIRED                   |

    # A payment that FAILS because SERVICE_UNAVAILABLE is an outcome the record reports, not the service being down.
    @uncertain
    Examples: Documented by the SDKs, not observed
      | who                                           | status | reason                         |
      | who cannot be found                           | FAILED | PAYER_NOT_FOUND                |
      | who may not receive                           | FAILED | PAYEE_NOT_ALLOWED_TO_RECEIVE   |
      | who is not allowed to transact                | FAILED | NOT_ALLOWED                    |
      | whose wallet is in another target environment | FAILED | NOT_ALLOWED_TARGET_ENVIRONMENT |
      | whose wallet refuses the callback host        | FAILED | INVALID_CALLBACK_URL_HOST      |
      | whose wallet does not take the currency       | FAILED | INVALID_CURRENCY               |
      | whose payment the service fails to process    | FAILED | INTERNAL_PROCESSING_ERROR      |
      | whose wallet service is unavailable           | FAILED | SERVICE_UNAVAILABLE            |

  @slow
  @req:COL-RTP-PENDING @req:COL-RTP-AUTHORIZED
  Scenario: A customer who approves after a while keeps the payment pending until then
    Given a partner subscribed to collection
    When the partner requests 20 from a customer who approves after a while
    Then it is accepted
    And the payment is still PENDING
    And the payment ends SUCCESSFUL with a financial transaction id

  @req:COL-RTP-PENDING
  Scenario: A payment stays pending while the customer has not answered
    Given a partner subscribed to collection
    When the partner requests 7 from a customer who never answers
    Then it is accepted
    And the payment is still PENDING

  # How long a payment stays pending is not in the spec (the live sandbox keeps it over 40 s): the reference sandbox's timing.
  @slow @stateful
  @req:COL-RTP-TIMEOUT
  Scenario: A payment the customer never answers expires in the end
    Given a partner subscribed to collection
    When the partner requests 7 from a customer who never answers
    Then it is accepted
    And the payment ends FAILED because EXPIRED

  # 15.50, an amount the live service writes back as 15.5: a callback that writes it otherwise than the status record
  # departs from the live service (each is the same record).
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant that gives a callback address is told the outcome once
    Given a partner subscribed to collection
    When the partner requests 15.50 from a customer who approves, to be told at its callback address
    Then it is accepted
    And exactly one callback arrives, carrying the payment's status record
    And no callback arrives that nobody asked for

  # Header names are case-insensitive (RFC 9110 §5.1): HTTP/2 writes them all in lower case, and so do many clients.
  # A target that knew X-Callback-Url only as written so would take the payment and tell nobody.
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant whose client writes its header names in lower case is told the outcome all the same
    Given a partner subscribed to collection
    When the partner requests 15 from a customer who approves, to be told at its callback address, writing its header names in lower case
    Then it is accepted
    And exactly one callback arrives, carrying the payment's status record

  # 204 No Content is a success as 200 is (RFC 9110 §15.3): a target that took it for a failure would tell again.
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant whose callback address answers with no content is told the outcome once
    Given a partner subscribed to collection
    When the partner requests 15.50 from a customer who approves, to be told at a callback address that answers with no content
    Then it is accepted
    And exactly one callback arrives, carrying the payment's status record
    And it is not told again, though its address answered with no content

  # A partner's listener may be down for a moment: a target that calls again must tell the same record (the spec
  # promises no retry, so one that does not is not tested here, never failed).
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant whose callback address refused the first delivery is told the same record again
    Given a partner subscribed to collection
    When the partner requests 15.50 from a customer who approves, to be told at a callback address that refuses the first delivery
    Then it is accepted
    And a callback told again carries the payment's status record, if one is told again

  # The payment's callback address is still the partner's after the payment ended: what arrives there later, after
  # the partner notified the delivery, must still be the payment's record.
  @callback
  @req:EVT-CALLBACK-RTP @req:COL-DN-ENQUEUED-200
  Scenario: A payment's callback address hears only the payment's record after its delivery is notified
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10, telling its callback address
    When the partner notifies the customer of delivery
    Then the notification is enqueued
    And every callback at the payment's address, however late, carries its status record

  # A partner often has one callback endpoint for all its payments: each payment is called back there.
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant that gives one callback address for two payments is told of each
    Given a partner subscribed to collection
    When the partner requests 15.50 and then 12.50 from a customer who approves, to be told of both at one callback address
    Then a callback arrives at that address for each payment, carrying its status record
    And no callback arrives that nobody asked for

  # A request refused as a duplicate gave its callback address to nothing: a target that keeps it tells the partner
  # of a payment at an address whose request it refused. The first payment is still pending when asked again.
  @callback @negative @slow
  @req:COL-RTP-DUPLICATE-409 @req:EVT-CALLBACK-RTP
  Scenario: A merchant that asks again under a payment's reference is told only where it first asked
    Given a partner subscribed to collection
    When the partner requests 20 from a customer who approves after a while, to be told at its callback address
    And the partner asks for 99 again under the same reference, to be told at an address of its own
    Then it is refused as a duplicate
    And the first is called back at its address, and the refused request at none

  # What a callback tells is the payment's, not the token's: asked for as the access token runs out, by a customer who
  # approves after a while, the payment ends once the token has expired, and its callback comes all the same (§6).
  @callback @slow
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant is told of a payment it asked for as its access token ran out
    Given a new partner subscribed to collection
    When the partner requests 15 from a customer who approves after a while as its access token runs out, to be told at its callback address
    Then it is accepted
    And exactly one callback arrives, carrying the payment's status record

  # Every outcome the test numbers give is called back, not only an approval: a target that calls back only on
  # success, or whose callback of a failure is not the status record, leaves the partner waiting or misled.
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario Outline: A merchant that gives a callback address is told of a payment by a customer <who>
    Given a partner subscribed to collection
    When the partner requests 15 from a customer <who>, to be told at its callback address
    Then it is accepted
    And the partner looks at the payment meanwhile
    And exactly one callback arrives, carrying the payment's status record

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

  # A key is a credential, not a transaction: making another for the API user moves none of its money (§4.5 #15).
  @req:PROV-APIKEY-CREATED-201 @req:TXN-MONEY-ONCE
  Scenario: A merchant's balance stays where it was when it gets another key
    Given a new partner subscribed to collection
    And the partner has seen its balance move with a first request to pay
    And the partner has read its balance
    When the partner creates another API key for its own API user
    Then its balance has not moved

  # A payment moves the money of the API user that asked for it (§4.2 #4: the balance of the own account), whoever was
  # provisioned since.
  @req:TXN-MONEY-ONCE
  Scenario: A payment moves its own merchant's money after another merchant is provisioned
    Given a new partner subscribed to collection
    And the partner has seen its balance move with a first request to pay
    And the partner has read its balance
    And another new partner subscribed to collection
    When the partner's request to pay with a customer who approves has ended
    Then the balance has moved by what the request to pay called for

  # The host is the calling API user's own (real-api-notes, callbacks): not the host of the latest one registered.
  @callback
  @req:EVT-CALLBACK-RTP
  Scenario: A merchant's own callback host is still taken after another API user registers another host
    Given a partner subscribed to collection
    And another API user has been registered since, with another callback host
    When the partner requests 15 from a customer who approves, to be told at its callback address
    Then it is accepted, as the live service holds a callback to the caller's own host

  @negative
  @req:EVT-CALLBACK-HOST-REJECTED @req:ERR-SET-A @req:ERR-BODY-CODE-MESSAGE
  Scenario: A callback address on another host than the merchant registered is refused
    Given a partner subscribed to collection
    When the partner requests 15 from a customer who approves, to be told at another host than it registered
    Then it is refused because the callback host is not the one registered
    And no payment was created

  # What precedes "@" in a URL's authority is its userinfo, not its host (RFC 3986 §3.2): the registered host written
  # there leaves the callback going to another host.
  @negative
  @req:EVT-CALLBACK-HOST-REJECTED
  Scenario: A callback address whose host hides behind the registered one as userinfo is refused
    Given a partner subscribed to collection
    When the partner requests 15 from a customer who approves, to be told at another host, behind its registered one as userinfo
    Then it is refused, as invalid or for its host
    And no payment was created

  @req:COL-DN-ENQUEUED-200 @req:COL-DN-429-AFTER-SUCCESS
  Scenario: A customer who paid is notified of the delivery
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery
    Then the notification is enqueued

  @negative
  @req:COL-DN-REPEAT-429
  Scenario: A second delivery notification soon after the first is refused
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    And the partner has notified the customer of delivery
    When the partner notifies the customer of delivery again
    Then it is refused as too many attempts

  # The attempts counted are the payment's (§4.2 #3: "for the same ID"), whichever of the partner's tokens carries them.
  @negative
  @req:COL-DN-REPEAT-429
  Scenario: A second delivery notification soon after the first is refused, with a token issued since too
    Given a new partner subscribed to collection
    And a customer who approves has paid the partner 10
    And the partner has notified the customer of delivery
    When the partner notifies the customer of delivery again, with an access token issued since
    Then it is refused as too many attempts

  # §8: repeated attempts for the same id give 429 after a successful one. Sent at the same moment, the one the target
  # handles second comes after the first: that it is refused is our reading ("after a successful attempt" may mean one
  # that has finished).
  @negative
  @req:COL-DN-REPEAT-429
  Scenario: Two delivery notifications sent at once are not both enqueued
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery twice at once
    Then one is enqueued and the other refused as too many attempts, by our reading

  # §8: repeated attempts give 429 after a successful one. The spec does not say how long the cool-down lasts, so that
  # a 429 neither resets nor ends it, and the attempt right after is refused too, is our reading.
  @negative
  @req:COL-DN-REPEAT-429
  Scenario: A delivery notification refused as too many attempts is refused again right after
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    And the partner has notified the customer of delivery
    And the partner's repeated notification has been refused as too many attempts
    When the partner notifies the customer of delivery again
    Then it is still refused as too many attempts, by our reading

  @slow
  @req:COL-DN-429-AFTER-SUCCESS
  Scenario: A notification refused while the payment was pending is no attempt
    Given a partner subscribed to collection
    And the partner requests 10 from a customer who approves after a while
    And the partner has notified the customer of delivery while the payment was pending
    When the partner notifies the customer of delivery once the payment has succeeded
    Then the notification is enqueued

  # §8: 429 only after an earlier successful attempt. A refusal, for the body or for the caller, was none.
  @req:COL-DN-429-AFTER-SUCCESS
  Scenario: A notification refused as invalid is no attempt
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    And the partner's delivery notification whose body is not JSON has been refused
    When the partner notifies the customer of delivery
    Then the notification is enqueued

  @req:COL-DN-429-AFTER-SUCCESS
  Scenario: A notification refused to another merchant is no attempt
    Given a new partner subscribed to collection
    And a customer who approves has paid the partner 10
    And another new partner subscribed to collection
    And another partner's delivery notification of the payment has been refused
    When the partner notifies the customer of delivery
    Then the notification is enqueued

  # A notification tells the customer; it changes nothing of the payment's record.
  @req:COL-DN-ENQUEUED-200 @req:COL-RTP-STATUS-QUERY
  Scenario: A payment notified of its delivery still reads as it was asked
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery
    Then the notification is enqueued
    And the payment still reads as it was asked

  @negative
  @req:COL-DN-NOT-COMPLETED-409 @req:COL-DN-429-AFTER-SUCCESS @req:ERR-SET-A
  Scenario: A payment that failed cannot be notified of delivery
    Given a partner subscribed to collection
    And a payment of 10 by a customer who rejects the payment has failed
    When the partner notifies the customer of delivery
    Then it is refused as not completed

  @negative
  @req:COL-DN-UNKNOWN-404 @req:COL-DN-429-AFTER-SUCCESS
  Scenario: A payment that does not exist cannot be notified of delivery
    Given a partner subscribed to collection
    When the partner notifies delivery of a payment that does not exist
    Then it is refused as not found

  # The live bound of 160 characters, from inside: 160 are within it, and it counts characters, not bytes.
  @req:COL-DN-ENQUEUED-200
  Scenario Outline: A customer is notified of the delivery with a message <message>
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery with a message <message>
    Then the notification is enqueued

    Examples:
      | message                   |
      | of exactly 160 characters |
      | of 100 accented letters   |

  @req:COL-DN-LANGUAGE
  Scenario Outline: A customer is notified of the delivery in their own language: <language>
    Given a partner subscribed to collection
    And a customer who approves has paid the partner 10
    When the partner notifies the customer of delivery in <language>
    Then the notification is enqueued

    Examples:
      | language                          |
      | Swedish                           |
      | Swedish, by its three-letter code |

  # A partner that does not poll learns the outcome from its callback alone: nothing waits for a read of the status.
  @callback
  @req:COL-DN-ENQUEUED-200
  Scenario: A customer who paid is notified of the delivery once the callback told the merchant, with no read first
    Given a partner subscribed to collection
    And the partner requests 15 from a customer who approves, to be told at its callback address
    And its callback has told the partner it succeeded, and the partner read nothing
    When the partner notifies the customer of delivery
    Then the notification is enqueued

  @negative
  @req:COL-DN-NOT-OWNER-404
  Scenario: Another merchant's notification is not found, even while the owner's notification is recent
    Given a new partner subscribed to collection
    And another new partner subscribed to collection
    And a customer who approves has paid the partner 10
    And the partner has notified the customer of delivery
    When another partner notifies the customer of delivery
    Then it is refused as not found, even while the owner's notification is recent

  @negative
  @req:COL-DN-NOT-OWNER-404
  Scenario: One merchant cannot notify delivery of another merchant's payment
    Given a new partner subscribed to collection
    And a customer who approves has paid the partner 10
    And another new partner subscribed to collection
    When another partner notifies the customer of delivery
    Then it is refused as not found

  @smoke
  @req:COL-BALANCE-200 @req:BAL-RECORD
  Scenario: A merchant reads its collection balance
    Given a partner subscribed to collection
    When the partner reads its balance
    Then the balance is given in the partner's currency

  @stateful
  Scenario: A successful payment credits the merchant's balance with its amount
    Given a new partner subscribed to collection
    And the partner has read its balance
    When a customer who approves pays the partner 25.75
    Then the balance has grown by 25.75

  @smoke
  @req:COL-HOLDER-ACTIVE
  Scenario: A registered customer is an active account holder
    Given a partner subscribed to collection
    When the partner checks whether a customer who approves is an active account holder
    Then the account holder is active

  # Which holders a target knows is its own (the spec names none): whoever they are, the answer is true or false.
  @req:COL-HOLDER-ACTIVE
  Scenario Outline: Whether a customer <who> is an active account holder is answered true or false
    Given a partner subscribed to collection
    When the partner checks whether a customer <who> is an active account holder
    Then whether the holder is active is answered true or false

    Examples:
      | who                         |
      | whose wallet fails          |
      | who rejects the payment     |
      | who lets the payment expire |
      | who never answers           |

  # Each kind of id §4.2 #8 names besides a phone number, in a form that fits it: answered true or false too.
  @req:COL-HOLDER-ACTIVE
  Scenario Outline: Whether the holder of <kind> is an active account holder is answered true or false, through collection
    Given a partner subscribed to collection
    When the partner checks whether the holder of <kind> "<id>" is an active account holder
    Then whether the holder is active is answered true or false

    Examples:
      | kind              | id                                   |
      | an e-mail address | customer@example.com                 |
      | a party code      | 3f1c2a4e-6b7d-4e8f-9a0b-1c2d3e4f5a6b |

  @uncertain
  @req:COL-HOLDER-NOT-ACTIVE
  Scenario Outline: A customer <who> is not an active account holder
    Given a partner subscribed to collection
    When the partner checks whether a customer <who> is an active account holder
    Then the account holder is reported <answer>

    Examples:
      | who                       | answer         |
      | who is not registered     | not registered |
      | whose account is inactive | inactive       |

  @negative
  @req:COL-HOLDER-TYPE-LOWERCASE
  Scenario: The kind of account holder id must be written in lower case
    Given a partner subscribed to collection
    When the partner checks a customer who approves, naming the kind of id in upper case
    Then it is refused as invalid

  @negative @strict
  @req:STATUS-OWNER-404
  Scenario: One merchant cannot read another merchant's payment
    Given a new partner subscribed to collection
    And a customer who approves has paid the partner 10
    And another new partner subscribed to collection
    When another partner looks up the payment
    Then it is refused as not found
