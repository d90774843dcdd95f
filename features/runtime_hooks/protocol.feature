@topology_controller
Feature: The Runtime SDK protocol between the controllers and Runtime Extensions
  Discovery, the failure policy of a handler, several extensions answering one hook, namespace selectors
  and TLS, as Cluster API's Runtime SDK client implements them (reference/runtime-hooks-and-addons.md §1).
  Extensions here declare timeoutSeconds 1. They are the harness's own, so a hang is held on the world's
  virtual clock: the deadline passes in virtual time and the call is cancelled; nothing waits in wall time.

  @seed_002 @must @RT_DISC_001
  Scenario: Discovery registers every handler as <handler>.<ExtensionConfig>
    Given a Runtime Extension "ext" registered with the failure policy Fail
    Then the ExtensionConfig "ext" lists the handlers "before-cluster-create.ext, after-control-plane-initialized.ext, before-cluster-upgrade.ext, after-control-plane-upgrade.ext, after-cluster-upgrade.ext, before-cluster-delete.ext"

  @seed_002 @must @RT_DISC_002
  Scenario Outline: Discovery refuses <case>
    Given a Runtime Extension "ext" that is not registered
    When the extension "ext" answers discovery with the handlers:
      | name   | hook                | timeoutSeconds | failurePolicy |
      | <name> | BeforeClusterCreate | <timeout>      | <policy>      |
      | <second> | BeforeClusterDelete |              |               |
    Then the ExtensionConfig "ext" is not discovered, with the message:
      """
      Error in discovery: failed to discover extension "ext": failed to validate discovery response: <error>
      """

    Examples:
      | case                 | name  | second | timeout | policy    | error                                                        |
      | a duplicate name     | hook  | hook   | 5       | Fail      | duplicate name for handler hook found                        |
      | a timeout above 30   | hook  | other  | 31      | Ignore    | handler hook timeoutSeconds 31 must be between 0 and 30      |
      | a negative timeout   | hook  | other  | -1      | Fail      | handler hook timeoutSeconds -1 must be between 0 and 30      |
      | an unknown policy    | hook  | other  | 5       | Sometimes | handler hook failurePolicy Sometimes must equal "Ignore" or "Fail" |

  @seed_002 @must @RT_DISC_003
  Scenario: Discovery refuses a handler name that is not a DNS-1123 label
    Given a Runtime Extension "ext" that is not registered
    When the extension "ext" answers discovery with the handlers:
      | name      | hook                | timeoutSeconds | failurePolicy |
      | Bad.Name  | BeforeClusterCreate | 5              | Fail          |
    Then the ExtensionConfig "ext" is not discovered, with a message containing "handler name Bad.Name is not valid: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"

  # Upstream's discovery has a fixed deadline of 10 s (defaultDiscoveryTimeout in internal/runtime/client,
  # v1.11 and HEAD alike), asked for with ?timeout=10s. The 10 seconds pass on the world's virtual clock.
  @seed_002 @must @RT_DISC_004
  Scenario: An extension whose discovery hangs is not discovered, and is given up after the 10 second discovery deadline
    Given a Runtime Extension "ext" that is not registered
    And the extension "ext" hangs on discovery
    When an ExtensionConfig "ext" for the extension "ext" is created
    Then the ExtensionConfig "ext" is not discovered, with the message:
      """
      Error in discovery: failed to discover extension "ext": http call failed: Post "https://<extension>/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery?timeout=10s": context deadline exceeded
      """
    And the extension "ext" was asked for Discovery with the timeout "10s"

  @seed_002 @must @RT_TIMEOUT_001
  Scenario: A hook call asks for the handler's timeoutSeconds
    Given a Runtime Extension "ext" registered with the failure policy Fail
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" was asked for BeforeClusterCreate with the timeout "1s"

  @seed_002 @must @RT_TLS_001
  Scenario: An extension whose certificate the caBundle does not sign is not discovered
    Given a Runtime Extension "ext" that is not registered
    And a Runtime Extension "other" that is not registered
    When an ExtensionConfig "ext" for the extension "ext" is created with:
      | setting     | value |
      | caBundle of | other |
    Then the ExtensionConfig "ext" is not discovered, with a message containing "tls: failed to verify certificate: x509: certificate signed by unknown authority"

  @seed_002 @must @RT_ADM_001
  Scenario: An ExtensionConfig with both a url and a service is refused by the webhook
    Given a Runtime Extension "ext" that is not registered
    When an ExtensionConfig "bad" for the extension "ext" is created with:
      | setting | value                |
      | service | default/my-extension |
    Then the write is refused with 422 "Invalid" and the message:
      """
      admission webhook "validation.extensionconfig.runtime.cluster.x-k8s.io" denied the request: ExtensionConfig.runtime.cluster.x-k8s.io "bad" is invalid: spec.clientConfig: Forbidden: only one of url or service can be defined
      """

  @seed_002 @must @RT_ADM_001
  Scenario Outline: An ExtensionConfig with <case> is refused
    Given a Runtime Extension "ext" that is not registered
    When an ExtensionConfig "bad" for the extension "ext" is created with:
      | setting   | value   |
      | <setting> | <value> |
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "<field>" as "<message>"

    Examples:
      | case                 | setting | value                   | field                  | message                                                           |
      | an http URL          | url     | http://<extension>      | spec.clientConfig.url  | 'https' is the only allowed URL scheme, e.g. https://example.com |
      | neither              | no url  | -                       | spec.clientConfig      | Required value: either url or service must be defined             |

  # Reference §1.4: only call errors (no answer, a status other than 200, an undecodable body) are
  # subject to Ignore; a Failure answer or a missing status never is.
  @seed_002 @must @RT_FP_001
  Scenario Outline: With the failure policy Fail, an extension that <misbehaviour> blocks the Cluster's creation
    Given a Runtime Extension "ext" registered with the failure policy Fail
    And the extension "ext" <misbehaviour> on BeforeClusterCreate
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has neither an infrastructure cluster nor a control plane
    And the Cluster "c1" reports TopologyReconciled "False" with reason "TopologyReconcileFailed" and a message containing:
      """
      <error>
      """

    Examples:
      | case      | misbehaviour             | error                                                             |
      | hang      | hangs                    | context deadline exceeded                                         |
      | redirect  | redirects                | http call failed: got response with status code 307 != 200        |
      | error     | answers 500              | http call failed: got response with status code 500 != 200        |
      | garbage   | answers garbage          | http call failed: failed to decode response                       |
      | no status | answers without a status | got unknown response status "" with message:                      |

  @seed_002 @must @RT_FP_002
  Scenario Outline: With the failure policy Ignore, an extension that <misbehaviour> does not hold the Cluster's creation
    Given a Runtime Extension "ext" registered with the failure policy Ignore
    And the extension "ext" <misbehaviour> on BeforeClusterCreate
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" received BeforeClusterCreate
    And the Cluster "c1" has its infrastructure cluster and control plane

    Examples:
      | case     | misbehaviour    |
      | hang     | hangs           |
      | redirect | redirects       |
      | error    | answers 500     |
      | garbage  | answers garbage |

  @seed_002 @must @RT_FP_003
  Scenario: With the failure policy Ignore, a refused connection does not hold the Cluster's creation
    Given a Runtime Extension "ext" registered with the failure policy Ignore
    And the extension "ext" has stopped
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has its infrastructure cluster and control plane

  @seed_002 @must @RT_FP_004
  Scenario: With the failure policy Fail, a refused connection holds the Cluster's creation
    Given a Runtime Extension "ext" registered with the failure policy Fail
    And the extension "ext" has stopped
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has neither an infrastructure cluster nor a control plane
    And the Cluster "c1" reports TopologyReconciled "False" with reason "TopologyReconcileFailed" and a message containing "connect: connection refused"

  @seed_002 @must @RT_FP_005
  Scenario Outline: Even with the failure policy Ignore, <case> holds the Cluster's creation
    Given a Runtime Extension "ext" registered with the failure policy Ignore
    And <answer>
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has neither an infrastructure cluster nor a control plane
    And the Cluster "c1" reports TopologyReconciled "False" with reason "TopologyReconcileFailed" and a message containing:
      """
      <error>
      """

    Examples:
      | case                 | answer                                                                                    | error                                                                                                        |
      | a Failure answer     | the extension "ext" answers BeforeClusterCreate with "Failure" and the message "no disk"  | failed to call extension handler "before-cluster-create.ext": got failure response with message: no disk    |
      | an answer w/o status | the extension "ext" answers without a status on BeforeClusterCreate                        | got unknown response status "" with message:                                                                 |

  @seed_002 @must @RT_AGG_001
  Scenario: Answers of several extensions are aggregated: the lowest retryAfterSeconds, the messages joined
    Given a Runtime Extension "ext-a" registered with the failure policy Fail
    And a Runtime Extension "ext-b" registered with the failure policy Fail
    And the extension "ext-a" answers BeforeClusterCreate with retryAfterSeconds 50 and the message "a waits"
    And the extension "ext-b" answers BeforeClusterCreate with retryAfterSeconds 20 and the message "b waits"
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" reports TopologyReconciled "False" with reason "LifecycleHookBlocking" and the message:
      """
      hook "BeforeClusterCreate" is blocking: a waits, b waits
      """
    And the extension "ext-b" receives BeforeClusterCreate again only after 20 seconds

  @seed_002 @must @RT_AGG_002
  Scenario: The first failing extension ends the round: later extensions are not called
    Given a Runtime Extension "ext-a" registered with the failure policy Fail
    And a Runtime Extension "ext-b" registered with the failure policy Fail
    And the extension "ext-a" answers BeforeClusterCreate with "Failure" and the message "a refuses"
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext-a" received BeforeClusterCreate
    And the extension "ext-b" never received BeforeClusterCreate

  @seed_002 @must @RT_NS_001
  Scenario: An extension is not called for Clusters in a namespace its selector does not match
    Given a Runtime Extension "ext" registered for namespaces labelled "addons=enabled"
    And a Namespace "team-a" labelled "addons=enabled" for Clusters
    And a Namespace "team-b" labelled "addons=disabled" for Clusters
    When a Cluster "team-b/c2" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" never received BeforeClusterCreate
    And the Cluster "team-b/c2" has its infrastructure cluster and control plane

  @seed_002 @must @RT_NS_001
  Scenario: An extension is called for Clusters in a namespace its selector matches
    Given a Runtime Extension "ext" registered for namespaces labelled "addons=enabled"
    And a Namespace "team-a" labelled "addons=enabled" for Clusters
    When a Cluster "team-a/c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" received BeforeClusterCreate
    And the last BeforeClusterCreate request to "ext" carried "cluster.metadata.namespace" "team-a"
    And the Cluster "team-a/c1" has its infrastructure cluster and control plane
