@runtime_extension
Feature: A Runtime Extension answers the Runtime SDK and its answers drive the Cluster lifecycle
  The Runtime Extension under test is, with --target extension, the one at --extension-url whose
  certificate --ca-file signs; otherwise the reference extension. Its answers are not scripted: each
  scenario looks at what it answers, and checks that the reference topology controller does what the
  answers say (reference/runtime-hooks-and-addons.md §1, seed 002 "Runtime hook definitions").

  @seed_002 @must @RTX_DISC_001
  Scenario: Discovery answers a valid DiscoveryResponse
    When the harness asks the Runtime Extension under test for discovery
    Then its discovery answer is a valid DiscoveryResponse

  @seed_002 @must @RTX_DISC_002
  Scenario: Registered through an ExtensionConfig, the extension is discovered with every handler it advertises
    Given the Runtime Extension under test registered with the ExtensionConfig "under-test"
    Then the ExtensionConfig "under-test" lists every handler the Runtime Extension under test advertises

  @seed_002 @must @RTX_HOOK_001
  Scenario: Every advertised handler answers its hook's request with a valid response
    When the harness calls every handler the Runtime Extension under test advertises
    Then every handler answered with a response of its hook's schema

  @seed_002 @should @RTX_HOOK_002
  Scenario: A handler that answers Failure says why
    When the harness calls every handler the Runtime Extension under test advertises
    Then every handler that answered Failure said why in its message

  @seed_002 @must @RTX_TIME_001
  Scenario: Every handler answers within its timeoutSeconds
    When the harness calls every handler the Runtime Extension under test advertises
    Then every handler answered within its timeoutSeconds

  @seed_002 @must @RTX_TLS_001
  Scenario: The extension's certificate verifies against its CA for the host of its URL
    Then the certificate of the Runtime Extension under test verifies against its CA

  # "follows the answers": while the last answer holds the hook (a non-zero retryAfterSeconds, a Failure,
  # or no usable answer under the failure policy Fail) the step it guards does not happen and the Cluster
  # says why; an answer that lets it go lets the step happen in the same reconcile. An extension that
  # holds a hook for an hour of virtual time (40 answers) fails: the lifecycle never goes on.
  @seed_002 @must @RTX_LC_001 @RTX_LC_002 @RTX_LC_003
  Scenario: The creation of a Cluster follows the extension's answers
    Given the Runtime Extension under test registered with the ExtensionConfig "under-test"
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" follows the answers of the Runtime Extension under test to BeforeClusterCreate
    And the Cluster "c1" follows the answers of the Runtime Extension under test to AfterControlPlaneInitialized

  @seed_002 @must @RTX_LC_001 @RTX_LC_002 @RTX_LC_003
  Scenario: The upgrade of a Cluster follows the extension's answers
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the Runtime Extension under test registered with the ExtensionConfig "under-test"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the Cluster "c1" follows the answers of the Runtime Extension under test to BeforeClusterUpgrade
    And the Cluster "c1" follows the answers of the Runtime Extension under test to AfterControlPlaneUpgrade
    And the Cluster "c1" follows the answers of the Runtime Extension under test to AfterClusterUpgrade

  @seed_002 @must @RTX_LC_001 @RTX_LC_002 @RTX_LC_003
  Scenario: The deletion of a Cluster follows the extension's answers
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the Runtime Extension under test registered with the ExtensionConfig "under-test"
    When the Cluster "c1" is deleted while its extensions answer
    Then the Cluster "c1" follows the answers of the Runtime Extension under test to BeforeClusterDelete
