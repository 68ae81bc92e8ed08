-- xxl-ctl import's undo (tests/test_import.sh): the second job's alarm
-- target passes the import's judging but the scheduler refuses it (a
-- webhook URL outside alarm/webhook_allow), after a group and a job were
-- created.  The import must remove both again.
CREATE TABLE `xxl_job_group` (`id` int, `app_name` varchar(64), `title` varchar(12),
  `address_type` tinyint, `address_list` text, `update_time` datetime);
INSERT INTO `xxl_job_group` VALUES (1,'imp-midway','Midway',0,NULL,NULL);
CREATE TABLE `xxl_job_info` (`id` int, `job_group` int, `job_desc` varchar(255),
  `executor_handler` varchar(255), `glue_type` varchar(50), `schedule_type` varchar(50),
  `schedule_conf` varchar(128), `alarm_email` varchar(255), `child_jobid` varchar(255));
INSERT INTO `xxl_job_info` VALUES (1,1,'fine','h','BEAN','NONE','','',''),
  (2,1,'refused','h','BEAN','NONE','','webhook:http://192.0.2.1/hook','1');
