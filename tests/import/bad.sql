-- xxl-ctl import's test (tests/test_import.sh): a dump cut short in a row
CREATE TABLE `xxl_job_group` (`id` int, `app_name` varchar(64), `title` varchar(12), `address_type` tinyint, `address_list` text);
INSERT INTO `xxl_job_group` VALUES (1,'imp-bad','Bad',0,NULL),
(2,'imp-bad-2','Bad 2',0,'cut
