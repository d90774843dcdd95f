@rollout_deployment @seed_004
Feature: Hook Jobs
  A hook is a Job made from its jobSpec (seed 004 "Lifecycle Hooks"). One Job per (owner, revision,
  hook), with a deterministic name, an ownerReference to the new ReplicaSet and a revision label
  ("Hooks (created Jobs) are tracked using ownerRefs and by being labeled with a revision"); the
  K8S_ROLLOUT_* variables are injected unless already set ("Injecting deployment information into hooks").

  Background:
    Given a Node "n1" that is Ready
    And a Deployment "web" with 3 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out

  @must @RH_JOB_001
  Scenario: The hook Job is named after the Deployment, the revision and the hook, and belongs to the new ReplicaSet
    Given the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | check | 1     |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hook Job "web-2-check" belongs to the ReplicaSet of revision 2 and is labelled with it

  # "a-deployment-name-long-enough-to-push-its-hook-jobs-over" has 57 characters: its Job name
  # <deployment>-2-acceptance would have 70.
  @must @RH_JOB_003
  Scenario: A hook Job name longer than 63 characters is shortened, and the hook runs
    Given a Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" with 3 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out
    And the Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" has the lifecycle hooks:
      | hook       | point |
      | acceptance | 2     |
    When the Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" has rolled out
    And the hook "acceptance" of the Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" ran as one Job whose name has at most 63 characters
    And the hooks of the Deployment "a-deployment-name-long-enough-to-push-its-hook-jobs-over" ran in this order:
      | hook       | new available |
      | acceptance | 2             |

  @must @RH_ENV_001
  Scenario: The hook Job learns where the rollout comes from and goes to
    Given the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | check | 1     |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hook Job "web-2-check" has the environment:
      | name                    | value        |
      | K8S_ROLLOUT_FROM_OBJECT | <revision 1> |
      | K8S_ROLLOUT_TO_OBJECT   | <revision 2> |
      | K8S_ROLLOUT_TYPE        | ROLLOUT      |

  @must @RH_ENV_002
  Scenario: A variable the hook already sets is left as it is
    Given the Deployment "web" has the lifecycle hooks:
      | hook  | point | env                     |
      | check | 1     | K8S_ROLLOUT_TYPE=CANARY |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hook Job "web-2-check" has the environment:
      | name                  | value        |
      | K8S_ROLLOUT_TYPE      | CANARY       |
      | K8S_ROLLOUT_TO_OBJECT | <revision 2> |

  @must @RH_ENV_003 @RH_DEP_004
  Scenario: Rolling back brings the old ReplicaSet back as the next revision and tells the hooks so
    Given the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | check | 1     |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and has rolled out
    When the Deployment "web" is rolled back to revision 1
    Then within 600 seconds the Deployment "web" has rolled out
    And the Deployment "web" is at revision 3, whose ReplicaSet was revision 1
    And the Deployment "web" has 2 ReplicaSets
    And the hook Job "web-3-check" has the environment:
      | name                    | value        |
      | K8S_ROLLOUT_FROM_OBJECT | <revision 2> |
      | K8S_ROLLOUT_TO_OBJECT   | <revision 3> |
      | K8S_ROLLOUT_TYPE        | ROLLBACK     |

  @must @RH_RETAIN_001
  Scenario Outline: A <result> hook Job with retainPolicy <retain> <outcome>
    Given the Deployment "web" has the lifecycle hooks:
      | hook  | point | policy | retain   | result   |
      | check | 1     | Ignore | <retain> | <result> |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the Job "web-2-check" <outcome>

    Examples:
      | case               | result    | retain    | outcome   |
      | always-succeeded   | Succeeded | Always    | exists    |
      | always-failed      | Failed    | Always    | exists    |
      | onfailure-ok       | Succeeded | OnFailure | is gone   |
      | onfailure-failed   | Failed    | OnFailure | exists    |
      | never-succeeded    | Succeeded | Never     | is gone   |
      | never-failed       | Failed    | Never     | is gone   |

  # seed 004 "Algorithm": "By having an ownerRef to particular controllerRevision (or RS) pruning will
  # propagate there". With a history of 0, the ReplicaSet of revision 2 is pruned once revision 3 has
  # rolled out, and the garbage collector takes its hook Job.
  @must @RH_JOB_002
  Scenario: Pruning an old ReplicaSet beyond revisionHistoryLimit takes its hook Jobs with it
    Given the Deployment "web" keeps a revision history of 0
    And the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | check | 100%  |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and has rolled out
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.12"
    Then within 600 seconds the Deployment "web" has rolled out
    And within 60 seconds the Job "web-2-check" is gone
    And the Deployment "web" has 1 ReplicaSets
    And the hook Job "web-3-check" belongs to the ReplicaSet of revision 3 and is labelled with it

  # seed 004 "Affected Objects": "The related state will be reported using Conditions and details will be
  # available on the created Job objects."
  @must @RH_COND_001
  Scenario: The LifecycleHooks condition says a hook group runs, then that every hook of the revision finished
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 2     | 2m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    Then the Deployment "web" has the condition "LifecycleHooks" "True" with reason "LifecycleHookRunning"
    And within 600 seconds the Deployment "web" has rolled out
    And the Deployment "web" has the condition "LifecycleHooks" "True" with reason "LifecycleHooksCompleted" and message "Every lifecycle hook of revision 2 has finished"
